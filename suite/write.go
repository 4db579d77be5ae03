package suite

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Marshal writes s as a suite file that Parse reads back to the same
// suite (Source aside). A prompt's language, system prompt and budget are
// written only where they differ from what it would inherit; texts that
// span lines are written as literal blocks.
func Marshal(s *Suite) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	put := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, str(key), v)
	}
	put(root, "name", str(s.Name))
	if s.Description != "" {
		put(root, "description", text(s.Description))
	}
	put(root, "language", str(s.Language))
	if s.Defaults.MaxTokens > 0 || s.Defaults.System != "" || s.Defaults.ShowThinking {
		d := &yaml.Node{Kind: yaml.MappingNode}
		if s.Defaults.MaxTokens > 0 {
			put(d, "max_tokens", num(s.Defaults.MaxTokens))
		}
		if s.Defaults.System != "" {
			put(d, "system", text(s.Defaults.System))
		}
		if s.Defaults.ShowThinking {
			put(d, "show_thinking", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		put(root, "defaults", d)
	}
	cats := &yaml.Node{Kind: yaml.SequenceNode}
	for _, c := range s.Categories {
		cm := &yaml.Node{Kind: yaml.MappingNode}
		put(cm, "name", str(c.Name))
		put(cm, "weight", num(c.Weight))
		if c.MaxTokens > 0 && c.MaxTokens != s.Defaults.MaxTokens {
			put(cm, "max_tokens", num(c.MaxTokens))
		}
		if c.Description != "" {
			put(cm, "description", text(c.Description))
		}
		if c.ShowThinking != s.Defaults.ShowThinking {
			put(cm, "show_thinking", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(c.ShowThinking)})
		}
		if len(c.Thresholds) > 0 {
			th := &yaml.Node{Kind: yaml.SequenceNode}
			for _, t := range c.Thresholds {
				th.Content = append(th.Content, str(t))
			}
			put(cm, "thresholds", th)
		}
		ps := &yaml.Node{Kind: yaml.SequenceNode}
		inherited := c.MaxTokens
		if inherited == 0 {
			inherited = s.Defaults.MaxTokens
		}
		for _, p := range c.Prompts {
			pm := &yaml.Node{Kind: yaml.MappingNode}
			put(pm, "id", str(p.ID))
			if p.Conversation() {
				put(pm, "turns", turnsNode(p.Turns))
			} else {
				put(pm, "text", text(p.Text))
			}
			if p.Language != "" && p.Language != s.Language {
				put(pm, "language", str(p.Language))
			}
			if p.System != "" && p.System != s.Defaults.System {
				put(pm, "system", text(p.System))
			}
			if p.MaxTokens > 0 && p.MaxTokens != inherited {
				put(pm, "max_tokens", num(p.MaxTokens))
			}
			ps.Content = append(ps.Content, pm)
		}
		put(cm, "prompts", ps)
		cats.Content = append(cats.Content, cm)
	}
	put(root, "categories", cats)

	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// turnsNode is a conversation's turns: a string for a turn without a
// think time, a mapping of text and think for one with.
func turnsNode(turns []Turn) *yaml.Node {
	l := &yaml.Node{Kind: yaml.SequenceNode}
	for _, t := range turns {
		if t.Think == 0 {
			l.Content = append(l.Content, text(t.Text))
			continue
		}
		l.Content = append(l.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("text"), text(t.Text), str("think"), str(t.Think.String()),
		}})
	}
	return l
}

// str is a string scalar, quoted by the encoder where YAML needs it.
func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// text is a string scalar, a literal block when it spans lines.
func text(s string) *yaml.Node {
	n := str(s)
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func num(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		panic(err) // numbers always encode
	}
	return &n
}
