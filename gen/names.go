package gen

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Names are the Go names a feature declares for one message. The engine
// checks them before any code is emitted: a method against the fields,
// oneofs and getters protoc-gen-go declares on the message, a package-level
// name against protoc-gen-go's names of the Go package and against every
// name the selected features declare.
type Names struct {
	// Methods are the methods the feature adds to the message's Go type.
	Methods []string
	// Package are the package-level identifiers the feature declares for
	// the message.
	Package []PackageName
}

// PackageName is a package-level Go identifier generated for a message.
type PackageName struct {
	Name string
	// Desc is what the name is generated for; a clash is reported at its
	// declaration.
	Desc protoreflect.Descriptor
	// What describes the name in a diagnostic, as in "flag constant
	// MsgFieldA of pkg.Msg (flag 1, path a)"; empty means "generated name
	// <Name>".
	What string
}

func (n PackageName) what() string {
	if n.What != "" {
		return n.What
	}
	return "generated name " + n.Name
}

// NamesFunc returns the names a feature declares for mm. The engine calls it
// only for messages the feature applies to: selected, and not skipped by
// the options of the message or its file.
type NamesFunc func(mm *Message) Names

// DeclareNames records the names feature declares for each message, for the
// clash checks. A feature calls it from an init function beside Register;
// a feature that declares no exported name need not call it. DeclareNames
// panics when called twice for a feature, a programming error in the plugin
// binary.
func DeclareNames(feature string, fn NamesFunc) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, ok := declaredNames[feature]; ok {
		panic("gen: names declared twice for feature " + feature)
	}
	declaredNames[feature] = fn
}

var declaredNames = map[string]NamesFunc{}

// namesOf returns the names feature declares for mm.
func namesOf(feature string, mm *Message) Names {
	registryMu.Lock()
	fn := declaredNames[feature]
	registryMu.Unlock()
	if fn == nil {
		return Names{}
	}
	return fn(mm)
}
