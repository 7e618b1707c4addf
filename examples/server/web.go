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
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" {
			name = "index.html"
		}
		// A JSON 404, as every error, before the file server's text one; a
		// directory too: no listings.
		if st, err := fs.Stat(root, name); err != nil || st.IsDir() {
			writeError(w, http.StatusNotFound, "no such file", "")
			return
		}
		// The files are small: always whole, so the file server has no
		// range or precondition to refuse in text.
		r = r.Clone(r.Context())
		for _, h := range []string{"Range", "If-Range", "If-Match", "If-Unmodified-Since"} {
			r.Header.Del(h)
		}
		// Revalidated on every load, so a new version shows at once.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
