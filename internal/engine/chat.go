package engine

import "strings"

// Message is one turn of a chat.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// chatTemplate is a chat prompt format recognised from the GGUF's
// tokenizer.chat_template (a Jinja template, which is not executed: the
// family is recognised by its markers and rendered by Go code).
type chatTemplate int

const (
	templateRaw chatTemplate = iota // no template: the contents joined by newlines
	templateChatML
	templateLlama2
	templateLlama3
	templateZephyr
)

// String returns the template family's name.
func (t chatTemplate) String() string {
	return [...]string{"raw", "chatml", "llama2", "llama3", "zephyr"}[t]
}

func detectTemplate(tmpl string) chatTemplate {
	switch {
	case strings.Contains(tmpl, "<|im_start|>"):
		return templateChatML
	case strings.Contains(tmpl, "<|start_header_id|>"):
		return templateLlama3
	case strings.Contains(tmpl, "<|user|>"):
		return templateZephyr
	case strings.Contains(tmpl, "[INST]"):
		return templateLlama2
	}
	return templateRaw
}

// ApplyChat renders msgs in the model's chat format, ending where the
// assistant's answer begins. The result is to be tokenized with special
// tokens added and parsed (Encode(text, true, true)); it holds no BOS of
// its own. A model without a recognised template gets the contents joined
// by newlines.
func (m *Model) ApplyChat(msgs []Message) string {
	return m.template.apply(msgs)
}

func (t chatTemplate) apply(msgs []Message) string {
	var b strings.Builder
	switch t {
	case templateChatML:
		for _, m := range msgs {
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
		b.WriteString("<|im_start|>assistant\n")
	case templateLlama3:
		for _, m := range msgs {
			b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + strings.TrimSpace(m.Content) + "<|eot_id|>")
		}
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	case templateZephyr:
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + "|>\n" + m.Content + "</s>\n")
		}
		b.WriteString("<|assistant|>\n")
	case templateLlama2:
		// [INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST] answer</s><s>[INST] ...
		system := ""
		first := true
		for _, m := range msgs {
			switch m.Role {
			case "system":
				system = "<<SYS>>\n" + strings.TrimSpace(m.Content) + "\n<</SYS>>\n\n"
			case "assistant":
				b.WriteString(" " + strings.TrimSpace(m.Content) + " </s>")
			default:
				if !first {
					b.WriteString("<s>")
				}
				b.WriteString("[INST] " + system + strings.TrimSpace(m.Content) + " [/INST]")
				system, first = "", false
			}
		}
	default:
		for i, m := range msgs {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(m.Content)
		}
	}
	return b.String()
}
