// Package docs holds edgekit's guides (Markdown) and the tests that run
// what they show; it has no code of its own to import.
package docs
