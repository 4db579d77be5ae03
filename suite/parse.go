package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/tokenpulse/tokenpulse/internal/didyoumean"
)

// The fields each level of a suite file may hold; anything else is
// reported as an unknown field, so a typo never passes silently.
var (
	suiteFields    = []string{"name", "description", "language", "defaults", "categories"}
	defaultsFields = []string{"max_tokens", "system", "show_thinking"}
	categoryFields = []string{"name", "weight", "max_tokens", "description", "thresholds", "prompts", "show_thinking"}
	promptFields   = []string{"id", "text", "turns", "language", "system", "max_tokens"}
	turnFields     = []string{"text", "think"}
)

// Limits that keep a hostile file (aliases fanned out into millions of
// prompts) from taking the process down.
const (
	maxIdent  = 128     // bytes in a suite name, category name or prompt id
	maxItems  = 100_000 // prompts and thresholds in a suite, aliases counted each time used
	maxErrors = 50      // errors reported; the rest are counted
)

// MaxFileBytes bounds a suite file: 64 MiB, 100,000 prompts of some 600
// bytes (parsing one takes about ten times its size in memory). A larger
// file is refused before it is parsed.
const MaxFileBytes = 64 << 20

// Load reads and parses the suite file at path. Errors in the file name
// path, the line and the field (see Error). A file of more than
// MaxFileBytes is refused without being read.
func Load(path string, opts ...Option) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxFileBytes {
		return nil, tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	return Parse(path, data, opts...)
}

// tooLarge is the error for a suite file over MaxFileBytes.
func tooLarge(name string) error {
	return &Error{File: name, Msg: fmt.Sprintf("more than %d bytes (%d MiB): a suite file may hold no more; split it", MaxFileBytes, MaxFileBytes>>20)}
}

// Parse parses a suite from data; name is the file name used in error
// messages and recorded as the suite's Source. Every problem found is
// reported: the returned error joins one *Error per problem.
//
// A file of more than MaxFileBytes, and a text (a prompt, a turn, a system
// prompt, a description) of more than MaxPromptBytes, are refused.
func Parse(name string, data []byte, opts ...Option) (*Suite, error) {
	if len(data) > MaxFileBytes {
		return nil, tooLarge(name)
	}
	p := &parser{file: name, opts: collect(opts)}
	s := p.suite(data)
	if p.dropped > 0 {
		p.errs = append(p.errs, &Error{File: p.file, Msg: fmt.Sprintf("%d more errors not shown", p.dropped)})
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	s.Source = name
	return s, nil
}

// parser walks the YAML node tree, collecting errors as it goes.
type parser struct {
	file    string
	opts    options
	errs    []error
	dropped int // errors beyond maxErrors
	items   int // prompts and thresholds walked so far
}

// add records e, or counts it once maxErrors are recorded.
func (p *parser) add(e *Error) {
	if len(p.errs) >= maxErrors {
		p.dropped++
		return
	}
	p.errs = append(p.errs, e)
}

// budget counts one more prompt or threshold and reports false, after
// recording an error, once the suite holds more than maxItems.
func (p *parser) budget(n *yaml.Node, field string) bool {
	if p.items++; p.items > maxItems {
		p.fail(n, field, "suite too large: at most %d prompts and thresholds", maxItems)
		return false
	}
	return true
}

// fail records an error at n's line (0 when n is nil).
func (p *parser) fail(n *yaml.Node, field, format string, args ...any) {
	p.add(&Error{File: p.file, Line: line(n), Field: field, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// yamlError turns a syntax error of the YAML library into an *Error.
func (p *parser) yamlError(err error) {
	e := &Error{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), Err: err}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	p.add(e)
}

func (p *parser) suite(data []byte) *Suite {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		p.yamlError(err)
		return nil
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == nil:
		p.fail(content(&more), "", "a suite file holds one YAML document; found a second")
	case !errors.Is(err, io.EOF):
		p.yamlError(err)
	}
	root := content(&doc)
	if root == nil {
		p.fail(nil, "", "empty file: a suite needs a name, a language and categories")
		return nil
	}
	m := p.mapping(root, "", suiteFields)
	if m == nil {
		return nil
	}
	s := &Suite{}
	s.Name = p.ident(m, "", "name")
	s.Description = p.text(m, "", "description", false)
	s.Language = p.text(m, "", "language", true)
	if d := m.vals["defaults"]; !isNull(d) {
		if dm := p.mapping(d, "defaults", defaultsFields); dm != nil {
			s.Defaults.MaxTokens = p.maxTokens(dm, "defaults")
			s.Defaults.System = p.text(dm, "defaults", "system", false)
			s.Defaults.ShowThinking, _ = p.flag(dm, "defaults", "show_thinking")
		}
	}
	cats := m.vals["categories"]
	if isNull(cats) {
		p.fail(m.at("categories"), "categories", "required: a suite needs at least one category")
		return s
	}
	list, ok := p.seq(cats, "categories")
	if ok && len(list) == 0 {
		p.fail(cats, "categories", "must list at least one category")
	}
	seen := &seen{cats: map[string]int{}, ids: map[string]int{}}
	for i, n := range list {
		s.Categories = append(s.Categories, p.category(n, fmt.Sprintf("categories[%d]", i), s, seen))
	}
	return s
}

// seen remembers the line of each category name and prompt id.
type seen struct{ cats, ids map[string]int }

func (p *parser) category(n *yaml.Node, path string, s *Suite, seen *seen) Category {
	var c Category
	m := p.mapping(n, path, categoryFields)
	if m == nil {
		return c
	}
	c.Name = p.ident(m, path, "name")
	if c.Name != "" {
		if first, dup := seen.cats[c.Name]; dup {
			p.fail(m.vals["name"], path+".name", "duplicate category %q (first at line %d)", c.Name, first)
		} else {
			seen.cats[c.Name] = line(m.vals["name"])
		}
	}
	if w := m.vals["weight"]; isNull(w) {
		p.fail(m.at("weight"), path+".weight", "required")
	} else if v, ok := p.number(w, path+".weight"); ok {
		if v <= 0 {
			p.fail(w, path+".weight", "must be > 0")
		}
		c.Weight = v
	}
	c.MaxTokens = p.maxTokens(m, path)
	if c.MaxTokens == 0 {
		c.MaxTokens = s.Defaults.MaxTokens
	}
	c.Description = p.text(m, path, "description", false)
	c.Thresholds = p.thresholds(m, path)
	if v, ok := p.flag(m, path, "show_thinking"); ok {
		c.ShowThinking = v
	} else {
		c.ShowThinking = s.Defaults.ShowThinking
	}

	prompts := m.vals["prompts"]
	if isNull(prompts) {
		p.fail(m.at("prompts"), path+".prompts", "required: a category needs at least one prompt")
		return c
	}
	list, ok := p.seq(prompts, path+".prompts")
	if ok && len(list) == 0 {
		p.fail(prompts, path+".prompts", "must list at least one prompt")
	}
	for i, pn := range list {
		if !p.budget(pn, fmt.Sprintf("%s.prompts[%d]", path, i)) {
			break
		}
		if pr, ok := p.prompt(pn, fmt.Sprintf("%s.prompts[%d]", path, i), s, &c, seen); ok {
			c.Prompts = append(c.Prompts, pr)
		}
	}
	return c
}

func (p *parser) thresholds(m *mapping, path string) []string {
	n := m.vals["thresholds"]
	if isNull(n) {
		return nil
	}
	list, _ := p.seq(n, path+".thresholds")
	var out []string
	for i, t := range list {
		field := fmt.Sprintf("%s.thresholds[%d]", path, i)
		if !p.budget(t, field) {
			break
		}
		if t.Kind != yaml.ScalarNode || isNull(t) {
			p.fail(t, field, "must be a threshold expression such as \"ttft.p95 < 250ms\", not %s", describe(t))
			continue
		}
		expr := strings.TrimSpace(t.Value)
		if expr == "" {
			p.fail(t, field, "must not be empty")
			continue
		}
		if p.opts.validate != nil {
			if err := p.opts.validate(expr); err != nil {
				p.add(&Error{File: p.file, Line: t.Line, Field: field, Msg: fmt.Sprintf("%q: %v", expr, err), Err: err})
				continue
			}
		}
		out = append(out, expr)
	}
	return out
}

func (p *parser) prompt(n *yaml.Node, path string, s *Suite, c *Category, seen *seen) (Prompt, bool) {
	m := p.mapping(n, path, promptFields)
	if m == nil {
		return Prompt{}, false
	}
	pr := Prompt{Category: c.Name}
	pr.ID = p.ident(m, path, "id")
	if pr.ID != "" {
		if first, dup := seen.ids[pr.ID]; dup {
			p.fail(m.vals["id"], path+".id", "duplicate id %q (first at line %d)", pr.ID, first)
		} else {
			seen.ids[pr.ID] = line(m.vals["id"])
		}
	}
	if turns := m.vals["turns"]; isNull(turns) {
		pr.Text = p.text(m, path, "text", true)
	} else {
		if !isNull(m.vals["text"]) {
			p.fail(m.at("text"), path+".text", "a prompt has text or turns, not both: text is one question, turns a conversation")
		}
		pr.Turns = p.turns(turns, path+".turns")
		if len(pr.Turns) > 0 {
			pr.Text = pr.Turns[0].Text
		}
	}
	pr.Language = p.text(m, path, "language", false)
	if pr.Language == "" {
		pr.Language = s.Language
	}
	pr.System = p.text(m, path, "system", false)
	if pr.System == "" {
		pr.System = s.Defaults.System
	}
	pr.MaxTokens = p.maxTokens(m, path)
	if pr.MaxTokens == 0 {
		pr.MaxTokens = c.MaxTokens
	}
	return pr, true
}

// mapping is a YAML mapping with its values by key.
type mapping struct {
	node *yaml.Node
	keys map[string]*yaml.Node
	vals map[string]*yaml.Node
}

// at returns the node to blame for key: its key node if present, else the
// mapping itself (a missing field is reported at the mapping's line).
func (m *mapping) at(key string) *yaml.Node {
	if k := m.keys[key]; k != nil {
		return k
	}
	return m.node
}

// mapping checks that n is a mapping whose keys are known, unique field
// names; it returns nil (after recording an error) if n is not a mapping.
func (p *parser) mapping(n *yaml.Node, path string, known []string) *mapping {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.fail(n, orRoot(path), "must be a mapping of fields, not %s", describe(n))
		return nil
	}
	m := &mapping{node: n, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k == nil || k.Kind != yaml.ScalarNode {
			p.fail(n.Content[i], orRoot(path), "field names must be plain strings, not %s", describe(k))
			continue
		}
		field := join(path, k.Value)
		switch {
		case !contains(known, k.Value):
			msg := "unknown field"
			if s := didyoumean.Suggest(k.Value, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.fail(k, field, "%s", msg)
		case m.keys[k.Value] != nil:
			p.fail(k, field, "duplicate field (first at line %d)", m.keys[k.Value].Line)
		default:
			m.keys[k.Value] = k
			m.vals[k.Value] = v
		}
	}
	return m
}

// seq checks that n is a list and returns its items.
func (p *parser) seq(n *yaml.Node, field string) ([]*yaml.Node, bool) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		p.fail(n, field, "must be a list, not %s", describe(n))
		return nil, false
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = deref(c)
	}
	return items, true
}

// text returns the string value of key, trimmed of surrounding space.
// A required field must be present and not blank.
func (p *parser) text(m *mapping, path, key string, required bool) string {
	n, field := m.vals[key], join(path, key)
	if isNull(n) {
		if required {
			p.fail(m.at(key), field, "required")
		}
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.fail(n, field, "must be a string, not %s", describe(n))
		return ""
	}
	v := strings.TrimSpace(n.Value)
	if v == "" && required {
		p.fail(n, field, "must not be empty")
	}
	if !p.bounded(n, field, v) {
		return ""
	}
	return v
}

// bounded reports whether text v of node n is at most MaxPromptBytes
// long, and records an error when it is not.
func (p *parser) bounded(n *yaml.Node, field, v string) bool {
	if len(v) > MaxPromptBytes {
		p.fail(n, field, "%d bytes, more than a prompt may hold (%d)", len(v), MaxPromptBytes)
		return false
	}
	return true
}

// ident returns the required identifier at key: a name or id of at most
// maxIdent bytes without spaces or control characters.
func (p *parser) ident(m *mapping, path, key string) string {
	v := p.text(m, path, key, true)
	if v == "" {
		return ""
	}
	field := join(path, key)
	if len(v) > maxIdent {
		p.fail(m.vals[key], field, "must be at most %d bytes long", maxIdent)
		return ""
	}
	if i := strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		p.fail(m.vals[key], field, "%q must not contain spaces or control characters", v)
		return ""
	}
	return v
}

// number parses a finite number.
func (p *parser) number(n *yaml.Node, field string) (float64, bool) {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil {
		p.fail(n, field, "must be a number, not %s", describe(n))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		p.fail(n, field, "must be a finite number")
		return 0, false
	}
	return v, true
}

// flag returns the optional boolean field key of m and whether it was
// given.
func (p *parser) flag(m *mapping, path, key string) (v, ok bool) {
	n := m.vals[key]
	if isNull(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		p.fail(n, join(path, key), "must be true or false, not %s", describe(n))
		return false, false
	}
	return v, true
}

// maxTokens returns the optional max_tokens field of m, 0 when absent.
func (p *parser) maxTokens(m *mapping, path string) int {
	n, field := m.vals["max_tokens"], join(path, "max_tokens")
	if isNull(n) {
		return 0
	}
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.fail(n, field, "must be a whole number, not %s", describe(n))
		return 0
	}
	if v <= 0 {
		p.fail(n, field, "must be > 0")
		return 0
	}
	return v
}

// content returns the top node of a document node, or nil for an empty
// document.
func content(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return deref(doc.Content[0])
	}
	if doc.Kind == 0 {
		return nil
	}
	return deref(doc)
}

// deref follows aliases to the anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "…"
		}
		return strconv.Quote(v)
	}
	return "an unexpected YAML node"
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// orRoot names the document root for errors about the whole document.
func orRoot(path string) string {
	if path == "" {
		return "suite"
	}
	return path
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
