//go:build !unix

package store

import "errors"

// writable cannot ask on this system: SQLite will say.
func writable(string) error { return nil }

// FreeBytes cannot ask on this system: SQLite will say when it is full.
func FreeBytes(string) (int64, error) { return 0, errors.ErrUnsupported }

// readOnlyFS cannot tell on this system.
func readOnlyFS(error) bool { return false }
