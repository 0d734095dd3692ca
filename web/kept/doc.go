// Package kept is what the site's kept answers may hold and which of them
// go first: a set bounded in bytes and in answers, in two segments (a
// segmented LRU), so that a flood of URLs asked for once, a crawler's or
// unique searches', pushes out only one another, never a page readers keep
// asking for; and, when the data's mark moves, which kept answers are
// worth building again. It keeps what it is given and builds nothing:
// package web builds each answer, serves it and decides when it is fresh.
package kept
