package suite

import "time"

// Suite is a golden prompt suite: named categories of prompts, each with a
// weight, a max_tokens budget and thresholds.
type Suite struct {
	// Name identifies the suite ("zh-medical"); it is recorded in run files.
	Name string
	// Description says in a sentence what the suite mirrors.
	Description string
	// Language is the default language tag of the prompts ("zh-CN", "en").
	Language string
	// Defaults hold the values that categories and prompts inherit.
	Defaults Defaults
	// Categories in file order; a loaded suite has at least one.
	Categories []Category
	// Source is where the suite came from: the file path given to Load or
	// the name given to Parse, or "builtin:NAME" for a builtin suite.
	Source string
}

// Defaults are the suite-wide values used where a category or prompt sets
// none.
type Defaults struct {
	// MaxTokens caps the answer length; 0 leaves it to the caller.
	MaxTokens int
	// System is the system prompt sent before each prompt, if any.
	System string
	// ShowThinking says whether the app shows a reasoning model's
	// thinking (show_thinking); categories inherit it.
	ShowThinking bool
}

// Category is a group of prompts that share a weight, a token budget and
// thresholds.
type Category struct {
	// Name identifies the category within its suite ("short").
	Name string
	// Weight is the category's relative share of a sample; > 0.
	Weight float64
	// MaxTokens is the category's answer budget (after inheriting the
	// suite default); 0 leaves it to the caller.
	MaxTokens int
	// Description says what kind of prompt the category holds.
	Description string
	// Thresholds are expressions in tokenpulse's threshold language, such
	// as "ttft.p95 < 250ms", that judge this category's requests.
	Thresholds []string
	// Prompts in file order; a loaded category has at least one.
	Prompts []Prompt
	// ShowThinking says whether the category's app shows a reasoning
	// model's thinking (after inheriting the suite default): the visible
	// figures then count the thinking tokens; by default they start at
	// the first answer token.
	ShowThinking bool
}

// Prompt is one request of a suite. In a loaded suite every field is
// resolved: Language, System and MaxTokens hold the inherited values when
// the file leaves them out, and Category names the enclosing category.
type Prompt struct {
	// ID identifies the prompt; unique within the suite.
	ID string
	// Text is the user message.
	Text string
	// Language is the prompt's language tag.
	Language string
	// System is the system prompt to send with it, if any.
	System string
	// MaxTokens caps the answer; 0 leaves it to the caller.
	MaxTokens int
	// Category is the name of the category the prompt belongs to.
	Category string
	// Turns, when set, make the prompt a conversation: each turn is a
	// user message sent as its own request, carrying the earlier turns
	// and the answers the target streamed to them. A conversation has at
	// least two turns, and Text is then the first turn's text (what a
	// workload that asks one question, such as the cold request, sends).
	Turns []Turn
}

// Turn is one user message of a conversation.
type Turn struct {
	// Text is the user message.
	Text string
	// Think is how long the user waits after the previous answer ended
	// before sending this turn (always 0 for the first turn).
	Think time.Duration
}

// Conversation reports whether p is a conversation (it has turns).
func (p Prompt) Conversation() bool { return len(p.Turns) > 0 }

// Requests returns how many requests p becomes: one per turn of a
// conversation, otherwise one.
func (p Prompt) Requests() int { return max(len(p.Turns), 1) }

// Prompts returns every prompt of the suite in file order.
func (s *Suite) Prompts() []Prompt {
	var out []Prompt
	for _, c := range s.Categories {
		out = append(out, c.Prompts...)
	}
	return out
}

// Category returns the category called name, or nil.
func (s *Suite) Category(name string) *Category {
	for i := range s.Categories {
		if s.Categories[i].Name == name {
			return &s.Categories[i]
		}
	}
	return nil
}

// ThinkingShown returns the categories whose app shows the thinking, as
// a run file's config.show_thinking records them; nil when none does.
func (s *Suite) ThinkingShown() map[string]bool {
	var out map[string]bool
	for _, c := range s.Categories {
		if c.ShowThinking {
			if out == nil {
				out = map[string]bool{}
			}
			out[c.Name] = true
		}
	}
	return out
}
