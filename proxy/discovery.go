package proxy

import (
	"encoding/json"
	"net/http"
)

// serveDiscovery answers the API's discovery document with the proxy's own
// address as its root, read once from the upstream.
func (p *Proxy) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	doc, err := p.document(r)
	if err != nil {
		p.opts.Logger.Warn("proxy: read the discovery document", "err", err)
		writeError(w, http.StatusBadGateway, "global", "backendError", "ingest proxy: the upstream's discovery document cannot be read now: retry")
		return
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		writeError(w, http.StatusBadGateway, "global", "backendError", "ingest proxy: the upstream's discovery document is not JSON")
		return
	}
	root := rootOf(r)
	m["rootUrl"] = root
	if sp, ok := m["servicePath"].(string); ok {
		m["baseUrl"] = root + sp
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(m)
}

// document is the upstream's discovery document, read once.
func (p *Proxy) document(r *http.Request) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.discovery != nil {
		return p.discovery, nil
	}
	doc, err := p.upstream.Discovery(r.Context())
	if err != nil {
		return nil, err
	}
	p.discovery = doc
	return doc, nil
}

// rootOf is the proxy's address as the client reached it.
func rootOf(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}
