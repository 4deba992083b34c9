module github.com/edgekit/edgekit

go 1.26

require google.golang.org/protobuf v1.36.12

require (
	github.com/bufbuild/protocompile v0.14.1 // indirect
	golang.org/x/sync v0.8.0 // indirect
)
