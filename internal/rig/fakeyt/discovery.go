package fakeyt

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"google.golang.org/api/youtube/v3"
)

// apiModule is the module whose youtube/v3 package ships the API's
// discovery document (youtube-api.json), the one the upstream serves.
const apiModule = "google.golang.org/api"

// headOnly is the discovery document's head, served where the module's
// copy cannot be found (a binary run away from the module cache): enough
// for the clock, which reads only the answer's Date.
const headOnly = `{"kind":"discovery#restDescription","name":"youtube","version":"v3","rootUrl":"https://youtube.googleapis.com/","servicePath":""}` + "\n"

var (
	docOnce sync.Once
	doc     []byte
)

// discoveryDocument is the API's discovery document as the Go module this
// build links ships it, read once from the module cache, else its head.
func discoveryDocument() []byte {
	docOnce.Do(func() {
		doc = []byte(headOnly)
		for _, p := range []string{besideTheClient(), modulePath()} {
			if b, err := os.ReadFile(p); p != "" && err == nil {
				doc = b
				return
			}
		}
	})
	return doc
}

// besideTheClient is youtube-api.json beside the source of the linked
// youtube package, as the compiler recorded it: a path of the module cache,
// or one under it when the build trimmed its paths.
func besideTheClient() string {
	f := runtime.FuncForPC(reflect.ValueOf(youtube.NewService).Pointer())
	if f == nil {
		return ""
	}
	file, _ := f.FileLine(f.Entry())
	if strings.HasPrefix(file, apiModule+"@") {
		file = filepath.Join(moduleCache(), file)
	}
	return filepath.Join(filepath.Dir(file), "youtube-api.json")
}

// modulePath is where the module cache keeps the linked module's copy of
// youtube-api.json, "" when the build says no version.
func modulePath() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path == apiModule {
			return filepath.Join(moduleCache(), apiModule+"@"+d.Version, "youtube", "v3", "youtube-api.json")
		}
	}
	return ""
}

// moduleCache is GOMODCACHE as the go command finds it.
func moduleCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	if p := os.Getenv("GOPATH"); p != "" {
		return filepath.Join(filepath.SplitList(p)[0], "pkg", "mod")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "pkg", "mod")
}
