package wiring_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// openAPI is what TestOpenAPIMatchesRoutes reads of docs/openapi.yaml.
type openAPI struct {
	Paths map[string]map[string]struct {
		Responses map[string]any `yaml:"responses"`
		Checks    []struct {
			Request string `yaml:"request"`
			Status  int    `yaml:"status"`
			Token   *bool  `yaml:"token"`
			As      string `yaml:"as"` // spent, client: an API token (see the file's description)
		} `yaml:"x-checks"`
	} `yaml:"paths"`
	Components struct {
		Schemas map[string]map[string]any `yaml:"schemas"`
	} `yaml:"components"`
}

// undocumented lists the fields of an answer (decoded JSON) its schema
// does not name, as paths (entries[].views_gained), where the schema
// names an object's properties.
func undocumented(schema map[string]any, v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		props, ok := schema["properties"].(map[string]any)
		if !ok {
			return nil
		}
		for k, val := range v {
			sub, ok := props[k].(map[string]any)
			if !ok {
				out = append(out, at+k)
				continue
			}
			out = append(out, undocumented(sub, val, at+k+".")...)
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for _, e := range v[:min(len(v), 1)] {
			out = append(out, undocumented(items, e, strings.TrimSuffix(at, ".")+"[].")...)
		}
	}
	return out
}

// TestOpenAPIMatchesRoutes sends every request docs/openapi.yaml lists to
// a real server: each route exists, answers every status the file
// documents, and errors have the documented shape.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var spec openAPI
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if len(spec.Paths) == 0 {
		t.Fatal("docs/openapi.yaml: no paths")
	}
	s := serve(t)
	video := s.hostileID(t)
	gone := s.goneID(t)
	tokens := map[string]string{
		"spent":  s.token(t, "spent", "tiny"),
		"client": s.token(t, "client", "standard"),
	}
	// A proxy's client spent, so that the quota's answer holds what it
	// adds then.
	s.clientSpent(t, "notebook", "videos.list")
	if code, _, body := s.getAs(t, "/api/v1/charts/US", tokens["spent"]); code != 200 {
		t.Fatalf("the tiny plan's one request: got %d\n%s", code, body)
	}
	for path, ops := range spec.Paths {
		route := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/?]+`) + `(\?|$)`)
		for method, op := range ops {
			covered := map[int]bool{}
			for _, c := range op.Checks {
				req := strings.NewReplacer("{video}", url.PathEscape(video), "{gone}", gone).Replace(c.Request)
				if !route.MatchString(req) {
					t.Errorf("%s %s: x-check %s is not this route", method, path, c.Request)
				}
				token := tokens[c.As]
				if c.As == "" && (c.Token == nil || *c.Token) {
					token = uiToken
				}
				code, header, body := s.getAs(t, req, token)
				checkRateHeaders(t, method+" "+req, c.As != "", code, header)
				if code != c.Status {
					t.Errorf("%s %s: got %d, the file says %d\n%s", method, path, code, c.Status, body)
				}
				if _, ok := op.Responses[strconv.Itoa(code)]; !ok {
					t.Errorf("%s %s: answered %d, which the file does not document", method, path, code)
				}
				var e errorJSON
				if code >= 400 && (json.Unmarshal(body, &e) != nil || e.Error.Status != code || e.Error.Code == "") {
					t.Errorf("%s %s: error body is not the documented shape: %s", method, req, body)
				}
				// Every field of an answer is in its schema.
				if name := schemaOf(op.Responses[strconv.Itoa(code)]); code == 200 && spec.Components.Schemas[name] != nil {
					var v any
					if err := json.Unmarshal(body, &v); err != nil {
						t.Errorf("%s %s: %v", method, req, err)
					}
					if missing := undocumented(spec.Components.Schemas[name], v, ""); len(missing) > 0 {
						sort.Strings(missing)
						t.Errorf("%s %s: fields the schema %s does not name: %s", method, req, name, strings.Join(missing, ", "))
					}
				}
				covered[code] = true
			}
			for status := range op.Responses {
				if n, _ := strconv.Atoi(status); !covered[n] {
					t.Errorf("%s %s: documents %s but no x-check answers it", method, path, status)
				}
			}
		}
	}
}

// schemaOf is the name of the schema a response's JSON refers to.
func schemaOf(response any) string {
	b, _ := json.Marshal(response)
	m := regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// checkRateHeaders checks the RateLimit fields of a metered answer (and
// their absence from the operator's), and Retry-After on a 429.
func checkRateHeaders(t *testing.T, what string, metered bool, code int, h http.Header) {
	t.Helper()
	policy := regexp.MustCompile(`^"[a-z]+";q=[0-9]+;w=[0-9]+$`)
	left := regexp.MustCompile(`^"[a-z]+";r=[0-9]+;t=[0-9]+$`)
	switch {
	case !metered && code != 401 && (h.Get("RateLimit") != "" || h.Get("RateLimit-Policy") != ""):
		t.Errorf("%s: the operator's request is metered: %q %q", what, h.Get("RateLimit-Policy"), h.Get("RateLimit"))
	case metered && code != 401 && (!policy.MatchString(h.Get("RateLimit-Policy")) || !left.MatchString(h.Get("RateLimit"))):
		t.Errorf("%s: RateLimit-Policy %q, RateLimit %q: want the draft-11 fields", what, h.Get("RateLimit-Policy"), h.Get("RateLimit"))
	}
	if n, err := strconv.Atoi(h.Get("Retry-After")); code == 429 && (err != nil || n < 1) {
		t.Errorf("%s: 429 with Retry-After %q, want whole seconds", what, h.Get("Retry-After"))
	}
}
