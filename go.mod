module github.com/edgekit/edgekit

go 1.26

require (
	github.com/bufbuild/protocompile v0.14.1
	github.com/google/go-cmp v0.7.0
	go.uber.org/mock v0.6.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/sync v0.16.0 // indirect
