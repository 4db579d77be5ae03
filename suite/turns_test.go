package suite

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadConversations(t *testing.T) {
	s, err := Load("testdata/conversations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trip := s.Categories[0].Prompts[0]
	want := []Turn{
		{Text: "I am planning a weekend in Lisbon. What should I see?"},
		{Text: "Which of those suits small children?", Think: 2 * time.Second},
		{Text: "How many days would you give it?", Think: 1500 * time.Millisecond},
	}
	if !reflect.DeepEqual(trip.Turns, want) {
		t.Errorf("turns:\n got  %+v\n want %+v", trip.Turns, want)
	}
	if !trip.Conversation() || trip.Requests() != 3 {
		t.Errorf("Conversation() %v, Requests() %d; want true, 3", trip.Conversation(), trip.Requests())
	}
	if trip.Text != want[0].Text {
		t.Errorf("Text %q, want the first turn's", trip.Text)
	}
	if trip.System != "You are a helpful assistant." || trip.MaxTokens != 24 || trip.Category != "chat" {
		t.Errorf("a conversation does not inherit like a prompt: %+v", trip)
	}
	short := s.Categories[1].Prompts[0]
	if short.Conversation() || short.Requests() != 1 {
		t.Errorf("a single prompt: Conversation() %v, Requests() %d", short.Conversation(), short.Requests())
	}
	roundTrip(t, s)
}

func TestConversationErrors(t *testing.T) {
	head := "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"text and turns", "        text: hi\n        turns: [one, two]\n",
			[]string{"x.yaml:8: categories[0].prompts[0].text: a prompt has text or turns, not both: text is one question, turns a conversation"}},
		{"one turn", "        turns: [only]\n",
			[]string{"x.yaml:8: categories[0].prompts[0].turns: a conversation needs at least two turns (a single question is text:)"}},
		{"not a list", "        turns: hello\n",
			[]string{`x.yaml:8: categories[0].prompts[0].turns: must be a list, not "hello"`}},
		{"empty turn", "        turns: [one, \"  \"]\n",
			[]string{"x.yaml:8: categories[0].prompts[0].turns[1]: must not be empty"}},
		{"turn without text", "        turns:\n          - one\n          - think: 2s\n",
			[]string{"x.yaml:10: categories[0].prompts[0].turns[1].text: required"}},
		{"think without unit", "        turns:\n          - one\n          - {text: two, think: 3}\n",
			[]string{`x.yaml:10: categories[0].prompts[0].turns[1].think: must be a duration with a unit, such as 2s or 500ms, not "3"`}},
		{"negative think", "        turns:\n          - one\n          - {text: two, think: -1s}\n",
			[]string{"x.yaml:10: categories[0].prompts[0].turns[1].think: must be ≥ 0"}},
		{"think too long", "        turns:\n          - one\n          - {text: two, think: 2h}\n",
			[]string{"x.yaml:10: categories[0].prompts[0].turns[1].think: must be at most 1h"}},
		{"think on the first turn", "        turns:\n          - {text: one, think: 1s}\n          - two\n",
			[]string{"x.yaml:9: categories[0].prompts[0].turns[0].think: the first turn follows no answer: think is the pause before a later turn"}},
		{"typo in a turn", "        turns:\n          - one\n          - {text: two, thinks: 1s}\n",
			[]string{`x.yaml:10: categories[0].prompts[0].turns[1].thinks: unknown field (did you mean "think"?)`}},
		{"a list as a turn", "        turns:\n          - one\n          - [two]\n",
			[]string{"x.yaml:10: categories[0].prompts[0].turns[1]: must be a user message (a string, or a mapping with text and think), not a list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(head+tt.yaml))
			if err == nil {
				t.Fatalf("got suite %+v, want an error", s)
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestConversationTooManyTurns(t *testing.T) {
	y := "name: x\nlanguage: en\ncategories:\n  - name: a\n    weight: 1\n    prompts:\n      - id: a1\n        turns:\n" +
		strings.Repeat("          - hi\n", MaxTurns+1)
	_, err := Parse("x.yaml", []byte(y))
	if err == nil || !strings.Contains(err.Error(), "at most 100 turns, not 101") {
		t.Errorf("got %v, want a refusal of 101 turns", err)
	}
}

// TestExampleChatSuite loads the example conversation suite of the docs.
func TestExampleChatSuite(t *testing.T) {
	s, err := Load("../docs/examples/en-chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Categories {
		for _, p := range c.Prompts {
			if !p.Conversation() || len(p.Turns) < 3 {
				t.Errorf("%s: %d turns, want a conversation of at least 3", p.ID, len(p.Turns))
			}
		}
	}
}
