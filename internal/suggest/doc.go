// Package suggest finds the known name a user most likely meant, for the
// "did you mean" hints of every strict parser in fullsend.
//
// compile and openshell use it. It is a leaf: the standard library only.
package suggest
