// Package throttle is what a request to the site may cost before it is
// answered, decided before any handler runs: the API's clients metered
// under their plans (Meter, over package ratelimit's limiters, a token's
// plan read at most once per LookupFor), the guesses of the access token
// slowed per address (Throttle), and the builds anonymous readers may run
// at once (Budget). Each decides; package web answers with the status
// and the page or the JSON its routes speak.
package throttle
