package suite

import (
	"reflect"
	"strings"
	"testing"
)

const thinkingSuite = `name: think
language: en
defaults:
  show_thinking: true
categories:
  - name: chat
    weight: 1
    prompts: [{id: a, text: hi}]
  - name: api
    weight: 1
    show_thinking: false
    prompts: [{id: b, text: hi}]
`

// show_thinking is inherited from the defaults and a category may say
// otherwise; it survives Marshal.
func TestShowThinking(t *testing.T) {
	s, err := Parse("think.yaml", []byte(thinkingSuite))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"chat": true}; !reflect.DeepEqual(s.ThinkingShown(), want) {
		t.Errorf("ThinkingShown = %v, want %v", s.ThinkingShown(), want)
	}
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("again.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(back.ThinkingShown(), s.ThinkingShown()) {
		t.Errorf("after Marshal: %v, want %v\n%s", back.ThinkingShown(), s.ThinkingShown(), b)
	}
	plain, err := Parse("p.yaml", []byte(strings.Replace(thinkingSuite, "defaults:\n  show_thinking: true\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if plain.ThinkingShown() != nil {
		t.Errorf("without show_thinking: %v, want none shown", plain.ThinkingShown())
	}
}

func TestShowThinkingMustBeBool(t *testing.T) {
	_, err := Parse("bad.yaml", []byte(strings.Replace(thinkingSuite, "show_thinking: false", "show_thinking: maybe", 1)))
	if err == nil || !strings.Contains(err.Error(), "categories[1].show_thinking") || !strings.Contains(err.Error(), "true or false") {
		t.Errorf("err = %v, want one naming categories[1].show_thinking", err)
	}
}
