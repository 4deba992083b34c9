// Command testapp is a small server the local platform's tests run as an
// application instance. It listens on 127.0.0.1:$PORT and serves:
//
//	/healthz   200 "ok", or 500 when TESTAPP_HEALTH=fail
//	/env?name= the value of an environment variable (404 when unset)
//	/pid       its process id
//
// Other variables shape its behaviour:
//
//	TESTAPP_EXIT=<code>        exit at once with code, before listening
//	TESTAPP_IGNORE_TERM=1      ignore SIGTERM
//	TESTAPP_TERM_FILE=<path>   on SIGTERM, write "term" to path, then exit 0
//	TESTAPP_PID_FILE=<path>    write its pid to path at start
//	TESTAPP_CHILD_PID_FILE=<p> start a child (itself, sleeping) in its
//	                           process group and write the child's pid to p
//
// With TESTAPP_MODE=child it only sleeps until it is killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	if os.Getenv("TESTAPP_MODE") == "child" {
		select {}
	}
	if code := os.Getenv("TESTAPP_EXIT"); code != "" {
		n, _ := strconv.Atoi(code)
		fmt.Fprintln(os.Stderr, "exiting at once with", n)
		os.Exit(n)
	}
	if f := os.Getenv("TESTAPP_PID_FILE"); f != "" {
		writeFile(f, strconv.Itoa(os.Getpid()))
	}
	if f := os.Getenv("TESTAPP_CHILD_PID_FILE"); f != "" {
		self, err := os.Executable()
		if err != nil {
			fail(err)
		}
		c := exec.Command(self)
		c.Env = append(os.Environ(), "TESTAPP_MODE=child")
		if err := c.Start(); err != nil {
			fail(err)
		}
		go func() { _ = c.Wait() }()
		writeFile(f, strconv.Itoa(c.Process.Pid))
	}
	if os.Getenv("TESTAPP_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			if f := os.Getenv("TESTAPP_TERM_FILE"); f != "" {
				writeFile(f, "term")
			}
			fmt.Println("terminated")
			os.Exit(0)
		}()
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if os.Getenv("TESTAPP_HEALTH") == "fail" {
			http.Error(w, "unhealthy", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		v, ok := os.LookupEnv(r.URL.Query().Get("name"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, v)
	})
	mux.HandleFunc("/pid", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getpid())
	})
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Getenv("PORT")))
	if err != nil {
		fail(err)
	}
	fmt.Println("listening on", l.Addr())
	fail(http.Serve(l, mux))
}

func writeFile(path, s string) {
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testapp:", err)
	os.Exit(1)
}
