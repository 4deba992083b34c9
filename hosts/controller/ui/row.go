package ui

import (
	"encoding/json"
	"time"
)

// Row is one object as the page shows it.
type Row struct {
	// Kind is the object kind ("ClusterInst").
	Kind string `json:"kind"`
	// Key is the object's key string.
	Key string `json:"key"`
	// Org is the organization that owns the object; "" for everyone,
	// AdminOnly for the admin alone.
	Org string `json:"org"`
	// State is the object's state.
	State string `json:"state"`
	// Where says where the object is (a cloudlet, a provider).
	Where string `json:"where,omitempty"`
	// Message goes with State: the latest progress message while a change
	// runs, what the state means once it is over.
	Message string `json:"message,omitempty"`
	// Errors of the last change.
	Errors []string `json:"errors,omitempty"`
	// Updated is when the row last changed.
	Updated time.Time `json:"updated"`

	// Name is the object's name, the readable part of its key.
	Name string `json:"name,omitempty"`
	// Cloudlet is the key of the cloudlet the object is on (a cloudlet's
	// own key for a cloudlet), to filter and group by.
	Cloudlet string `json:"cloudlet,omitempty"`
	// Created is when the object was created; zero when unknown.
	Created time.Time `json:"created,omitzero"`
	// Power is the power state of an instance.
	Power string `json:"power,omitempty"`
	// Links are the objects this one refers to (its cloudlet, cluster, App).
	Links []Link `json:"links,omitempty"`
	// Location is where a cloudlet is; nil when it has none.
	Location *Location `json:"location,omitempty"`
	// Usage is what a cloudlet uses of its resources.
	Usage []Usage `json:"usage,omitempty"`
	// Phases are the stages of a pipeline the object goes through (a
	// FLUIDOS solver's discovery, reservation, purchase, allocation), in
	// order, each with its state.
	Phases []Phase `json:"phases,omitempty"`
	// Detail is what the object's page shows. Event streams leave it out
	// (the page fetches it from /ui/object for the object it shows).
	Detail *Detail `json:"detail,omitempty"`
}

// Link names another object.
type Link struct {
	// Rel is what the object is to the row's ("cloudlet", "cluster", "app").
	Rel  string `json:"rel"`
	Kind string `json:"kind"`
	Key  string `json:"key"`
}

// Phase is one stage of a pipeline and its state ("" when not started).
type Phase struct {
	Name  string `json:"name"`
	State string `json:"state,omitempty"`
}

// Location is a point on Earth, in degrees.
type Location struct {
	Latitude  float64 `json:"lat"`
	Longitude float64 `json:"lon"`
}

// Usage is the use of one resource against its quota.
type Usage struct {
	// Name of the resource ("vCPUs", "RAM", "Instances").
	Name string `json:"name"`
	// Used is the amount in use.
	Used uint64 `json:"used"`
	// Quota is the cap set on it; 0 for none.
	Quota uint64 `json:"quota,omitempty"`
	// Total is what the infrastructure has; 0 when unknown.
	Total uint64 `json:"total,omitempty"`
	// Units of Used, Quota and Total ("MB").
	Units string `json:"units,omitempty"`
}

// Detail is what an object's page shows beyond its row. Sources build it
// from redacted copies of the objects: no field marked debug_redact is in
// it.
type Detail struct {
	// Fields is the object as JSON, secrets cleared.
	Fields json.RawMessage `json:"fields,omitempty"`
	// Info is what its resource manager reports about it, as JSON, secrets
	// cleared.
	Info json.RawMessage `json:"info,omitempty"`
	// History is the object's recent operations, oldest first.
	History []Operation `json:"history,omitempty"`
}

func (r Row) id() string { return r.Kind + "/" + r.Key }
