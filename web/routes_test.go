package web

import (
	"regexp"
	"strings"
)

// requestFor turns a ServeMux pattern into a request that matches it.
func requestFor(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "GET", pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(path, "x")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "style.css"
	}
	return method, path
}
