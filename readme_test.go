package leaderboard_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The README's Go blocks are compiled by TestREADMEGoBlocksCompile, so that
// what a reader pastes compiles. A block is either
//
//   - a whole program: it starts with "package", or
//   - a fragment: the line before its fence is a marker naming the function
//     it is the body of, by its parameters,
//
//     <!-- compile: func(ctx context.Context, client rueidis.Client) error -->
//
//     The fragment is compiled as that function's body with "return nil"
//     after it, so it must use every variable it declares and may end with
//     a return of its own. Its imports are found from the packages it names
//     (readmeImports); a fragment naming pgstore or pgxpool compiles in the
//     pgstore module, every other block in this one.
//
// Every block is built offline (GOPROXY=off) from a directory under its
// module whose name starts with "_", which ./... patterns leave out, and
// which is removed afterwards.

// readmeImports are the packages a README fragment may name, by the name
// it uses.
var readmeImports = map[string]string{
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"log":         "log",
	"os":          "os",
	"time":        "time",
	"rueidis":     "github.com/redis/rueidis",
	"leaderboard": "github.com/skiprank/leaderboard",
	"pgstore":     "github.com/skiprank/leaderboard/pgstore",
	"pgxpool":     "github.com/jackc/pgx/v5/pgxpool",
}

var compileMarker = regexp.MustCompile(`^<!-- compile: func(\(.*\)) error -->$`)

// goBlock is one ```go block of a Markdown file, made into a Go file.
type goBlock struct {
	line   int    // the line of its first line of code, 1-based
	src    string // the Go file to build
	offset int    // lines of src before the block's first line
	module string // the module directory it builds in, relative to the repository
}

// readmeBlocks finds every ```go block of a Markdown text and makes each a
// Go file; a block that is neither a program nor a marked fragment is an
// error.
func readmeBlocks(text string) ([]goBlock, []error) {
	var blocks []goBlock
	var errs []error
	lines := strings.Split(text, "\n")
	prev := "" // the last non-blank line before the current one
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			if strings.TrimSpace(lines[i]) != "" {
				prev = strings.TrimSpace(lines[i])
			}
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		body := strings.Join(lines[start:i], "\n")
		b, err := makeBlock(body, prev)
		if err != nil {
			errs = append(errs, fmt.Errorf("README.md:%d: %w", start+1, err))
			continue
		}
		b.line = start + 1
		blocks = append(blocks, b)
	}
	return blocks, errs
}

// makeBlock makes a Go file of one block's code; marker is the line before
// the block's fence.
func makeBlock(code, marker string) (goBlock, error) {
	if strings.HasPrefix(strings.TrimSpace(code), "package ") {
		return goBlock{src: code + "\n", module: "."}, nil
	}
	m := compileMarker.FindStringSubmatch(marker)
	if m == nil {
		return goBlock{}, fmt.Errorf("a Go block that is no program (no package clause) needs the line <!-- compile: func(PARAMS) error --> before it")
	}
	fn := "func fragment" + m[1] + " error {\n"
	names, err := packagesNamed(fn + code + "\nreturn nil\n}\n")
	if err != nil {
		return goBlock{}, err
	}
	var head strings.Builder
	head.WriteString("package main\n\nimport (\n")
	module := "."
	for _, n := range names {
		fmt.Fprintf(&head, "\t%q\n", readmeImports[n])
		if n == "pgstore" || n == "pgxpool" {
			module = "pgstore"
		}
	}
	head.WriteString(")\n\nfunc main() {}\n\n" + fn)
	src := head.String() + code + "\n\treturn nil\n}\n"
	return goBlock{src: src, offset: strings.Count(head.String(), "\n"), module: module}, nil
}

// packagesNamed returns the names of readmeImports that src selects from
// (fmt.Println names fmt), sorted.
func packagesNamed(fn string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package main\n"+fn, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("does not parse as a function body: %w", err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && readmeImports[id.Name] != "" && !slices.Contains(names, id.Name) {
				names = append(names, id.Name)
			}
		}
		return true
	})
	slices.Sort(names)
	return names, nil
}

// buildBlocks builds the blocks, one go command per module, and returns
// every compile error as README.md:LINE: message.
func buildBlocks(t *testing.T, blocks []goBlock) []error {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the README's blocks with: %v", err)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := "_readme-check-" + hex.EncodeToString(r[:])
	byModule := map[string][]int{}
	for i, b := range blocks {
		if byModule[b.module] == nil {
			t.Cleanup(func() { os.RemoveAll(filepath.Join(b.module, tmp)) })
		}
		dir := filepath.Join(b.module, tmp, "b"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.src), 0o644); err != nil {
			t.Fatal(err)
		}
		byModule[b.module] = append(byModule[b.module], i)
	}
	var errs []error
	for module, idx := range byModule {
		// Executables go to a temp dir: go build of one main package
		// would otherwise write it into the module's folder.
		args := []string{"build", "-o", t.TempDir() + string(filepath.Separator)}
		for _, i := range idx {
			args = append(args, "./"+tmp+"/b"+strconv.Itoa(i))
		}
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = module
		cmd.Env = append(os.Environ(), "GOPROXY=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			errs = append(errs, mapBuildErrors(string(out), tmp, blocks)...)
			if len(errs) == 0 {
				errs = append(errs, fmt.Errorf("go build in %s: %v\n%s", module, err, out))
			}
		}
	}
	return errs
}

var buildErrLine = regexp.MustCompile(`b(\d+)/main\.go:(\d+):(\d+): (.*)`)

// mapBuildErrors turns the go command's errors about the blocks' files into
// errors naming the README's lines.
func mapBuildErrors(out, tmp string, blocks []goBlock) []error {
	var errs []error
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, tmp) || strings.HasPrefix(line, "#") {
			continue // the go command's "# package" headings
		}
		m := buildErrLine.FindStringSubmatch(line)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s", line))
			continue
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		b := blocks[i]
		errs = append(errs, fmt.Errorf("README.md:%d: %s", b.line+n-1-b.offset, m[4]))
	}
	return errs
}

// TestREADMEGoBlocksCompile compiles every ```go block of README.md.
func TestREADMEGoBlocksCompile(t *testing.T) {
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := readmeBlocks(string(text))
	if len(blocks)+len(errs) == 0 {
		t.Fatal("README.md has no Go block")
	}
	if len(blocks) > 0 {
		errs = append(errs, buildBlocks(t, blocks)...)
	}
	for _, err := range errs {
		t.Error(err)
	}
}

// TestREADMECheckFailsOnBrokenBlocks feeds the check blocks that do not
// compile, and one without its marker, and expects an error naming the
// line of each; the good ones pass.
func TestREADMECheckFailsOnBrokenBlocks(t *testing.T) {
	md := strings.Join([]string{
		"# t",                    // 1
		"```go",                  // 2
		"package main",           // 3
		"",                       // 4
		"func main() { x := 1 }", // 5: declared and not used
		"```",                    // 6
		"```go",                  // 7
		"board.Top(ctx, 10)",     // 8: no marker
		"```",                    // 9
		"<!-- compile: func(ctx context.Context, client rueidis.Client) error -->", // 10
		"```go", // 11
		"board, err := leaderboard.New(client, \"arena\")", // 12
		"if err != nil {",                  // 13
		"\treturn err",                     // 14
		"}",                                // 15
		"_, err = board.Top(ctx, \"ten\")", // 16: a string for an int
		"return err",                       // 17
		"```",                              // 18
		"<!-- compile: func(ctx context.Context, client rueidis.Client) error -->", // 19
		"```go", // 20
		"board, err := leaderboard.New(client, \"arena\")", // 21
		"if err != nil {",                // 22
		"\treturn err",                   // 23
		"}",                              // 24
		"top, err := board.Top(ctx, 10)", // 25
		"fmt.Println(top)",               // 26
		"return err",                     // 27
		"```",                            // 28
	}, "\n")
	blocks, errs := readmeBlocks(md)
	if len(blocks) != 3 || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "README.md:8:") {
		t.Fatalf("blocks %d, errors %v; want 3 blocks and an error at line 8", len(blocks), errs)
	}
	var got []string
	for _, err := range buildBlocks(t, blocks) {
		got = append(got, err.Error())
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"README.md:5:", "README.md:16:"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no error at %s; got:\n%s", want, joined)
		}
	}
	if len(got) != 2 {
		t.Errorf("want exactly 2 compile errors (the good blocks pass), got:\n%s", joined)
	}
}
