package main

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The page is plain HTML, CSS and JavaScript compiled into the binary: no
// build step, nothing to deploy beside it.
//
//go:embed web
var webFiles embed.FS

// pageHandler serves web/index.html at / and web/static/ at /static/.
func pageHandler() http.Handler {
	root, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the directive above guarantees it exists
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		// Revalidated on every load, so a new version shows at once; the
		// files are small.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
