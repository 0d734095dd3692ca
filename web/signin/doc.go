// Package signin is what lets a person in to the operator's pages: the
// access token's strength, checked before a listener opens (a guess spread
// over many addresses meets the token alone, so it must be beyond
// reach), the tokens it makes, and the sessions a sign-in starts, each by
// a random id the cookie holds, kept in the database so that a sign-in
// holds on every replica and a sign-out on one ends it on all. Package web
// holds the sign-in's pages and decides who each route answers.
package signin
