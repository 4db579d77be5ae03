package suite

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Limits of a conversation.
const (
	// MaxTurns is the most turns a conversation may have.
	MaxTurns = 100
	// MaxThink is the longest think time before a turn (1h).
	MaxThink = time.Hour
)

// turns reads a conversation's turns: a list of at least two user
// messages, each a string or a mapping with text and an optional think
// time (not on the first turn). It returns nil, after recording the
// errors, when any turn is wrong.
func (p *parser) turns(n *yaml.Node, path string) []Turn {
	list, ok := p.seq(n, path)
	if !ok {
		return nil
	}
	switch {
	case len(list) < 2:
		p.fail(n, path, "a conversation needs at least two turns (a single question is text:)")
		return nil
	case len(list) > MaxTurns:
		p.fail(n, path, "a conversation has at most %d turns, not %d", MaxTurns, len(list))
		return nil
	}
	out := make([]Turn, 0, len(list))
	bad := false
	for i, tn := range list {
		field := fmt.Sprintf("%s[%d]", path, i)
		if !p.budget(tn, field) {
			return nil
		}
		t, ok := p.turn(tn, field, i)
		bad = bad || !ok
		out = append(out, t)
	}
	if bad {
		return nil
	}
	return out
}

// turn reads turn i of a conversation.
func (p *parser) turn(n *yaml.Node, field string, i int) (Turn, bool) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		t := Turn{Text: strings.TrimSpace(n.Value)}
		if t.Text == "" {
			p.fail(n, field, "must not be empty")
			return t, false
		}
		return t, p.bounded(n, field, t.Text)
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, field, "must be a user message (a string, or a mapping with text and think), not %s", describe(n))
		return Turn{}, false
	}
	m := p.mapping(n, field, turnFields)
	if m == nil {
		return Turn{}, false
	}
	t := Turn{Text: p.text(m, field, "text", true)}
	ok := t.Text != ""
	tn := m.vals["think"]
	if isNull(tn) {
		return t, ok
	}
	tf := field + ".think"
	if tn.Kind != yaml.ScalarNode || tn.ShortTag() != "!!str" {
		p.fail(tn, tf, "must be a duration with a unit, such as 2s or 500ms, not %s", describe(tn))
		return t, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(tn.Value))
	switch {
	case err != nil:
		p.fail(tn, tf, "must be a duration with a unit, such as 2s or 500ms, not %s", describe(tn))
		return t, false
	case d < 0:
		p.fail(tn, tf, "must be ≥ 0")
		return t, false
	case d > MaxThink:
		p.fail(tn, tf, "must be at most 1h")
		return t, false
	case i == 0 && d > 0:
		p.fail(tn, tf, "the first turn follows no answer: think is the pause before a later turn")
		return t, false
	}
	t.Think = d
	return t, ok
}
