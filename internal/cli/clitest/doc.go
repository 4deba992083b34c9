// Package clitest holds helpers for the tests of the command-line tools: a
// throwaway certificate authority issuing loopback server and client
// certificates, a buffer a process writes while a test reads it, and a
// check that a streamed table stays lined up with its header.
package clitest
