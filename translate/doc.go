// Package translate turns Metal Shading Language source into a translation
// unit for a backend.
package translate
