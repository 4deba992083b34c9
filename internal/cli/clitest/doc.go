// Package clitest holds helpers for the tests of the command-line tools: a
// throwaway certificate authority issuing loopback server and client
// certificates, and a buffer a process writes while a test reads it.
package clitest
