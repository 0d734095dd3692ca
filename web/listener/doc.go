// Package listener is what every HTTP listener of ingest shares, whatever
// it serves: the port opened (a port held, or an address this host lacks,
// is a setting to change, never an outage to restart into), an http.Server
// whose every phase has a timeout, served until its context ends and then
// drained, the /readyz checks and their answer, and the /healthz ask of
// ingest probe. It knows nothing of the site: the pages and the API
// (package web) hand it a handler.
package listener
