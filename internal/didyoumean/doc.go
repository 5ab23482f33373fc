// Package didyoumean finds the known name a user most likely meant, for the
// "did you mean" hints of every strict parser in fullsend.
//
// compile and openshell use it. Of this module it imports nothing; its one
// library is github.com/agnivade/levenshtein (no dependencies of its own),
// which the binary links through OPA already.
package didyoumean
