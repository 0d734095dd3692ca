//go:build !unix

package export

// alive cannot ask on this system: every writer counts as alive, and its
// leftovers are kept.
func alive(int) bool { return true }
