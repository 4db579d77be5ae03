package stream

import (
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tokenpulse/tokenpulse/api"
)

// chunkOptions parse an event's JSON as leniently as encoding/json does
// (duplicate names, invalid UTF-8).
var chunkOptions = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// chunkParser reads the parts of a chunk (an [api.Chunk]) that the client
// needs, walking the JSON tokens itself so that an ordinary event
// allocates nothing: the content is unquoted straight onto the end of the
// stream's text, and the other strings are only looked at. One parser
// serves one stream; it keeps its buffers from event to event.
//
// Objects that come once a stream (usage, timings) are decoded only when
// present.
type chunkParser struct {
	// text is the stream's content so far (reasoning excluded).
	text []byte

	// What the last event held; reset by parse.
	choices   int  // elements of "choices"
	token     bool // a non-empty content, text or reasoning delta
	reasoning bool // a non-empty reasoning delta
	finish    []byte
	hasFinish bool // a non-empty finish_reason
	hasUsage  bool
	hasExt    bool
	hasLlama  bool
	hasError  bool // an "error" member (checked further only when needed)
	usage     api.Usage
	ext       api.Extension
	llama     api.LlamaTimings

	// cur is the choice being read.
	cur choiceState
}

// parse reads one event's data. On error the stream's text is as it was
// before the event.
func (p *chunkParser) parse(data []byte) error {
	n := len(p.text)
	p.choices, p.token, p.reasoning = 0, false, false
	p.finish, p.hasFinish = p.finish[:0], false
	p.hasUsage, p.hasExt, p.hasLlama, p.hasError = false, false, false, false
	p.usage, p.ext, p.llama = api.Usage{}, api.Extension{}, api.LlamaTimings{}
	if err := jsonv2.Unmarshal(data, p, chunkOptions); err != nil {
		p.text = p.text[:n]
		return err
	}
	return nil
}

var errNotObject = errors.New("a chunk must be a JSON object")

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom for the whole
// chunk. A JSON null is an empty chunk, as it was for encoding/json.
//
// A member named twice means what the library's decoding into structs
// makes of it: the last occurrence of a string or an array, objects
// merged, null clearing. FuzzChunkParser holds the two together.
//
// The walkers switch on each member name in place: handing the name to a
// function value would make it escape, an allocation per member.
func (p *chunkParser) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if ok, err := beginObject(dec, errNotObject); !ok {
		return err
	}
	start := len(p.text)
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "choices":
			// A later "choices" replaces an earlier one.
			p.text = p.text[:start]
			p.choices, p.token, p.reasoning = 0, false, false
			p.finish, p.hasFinish = p.finish[:0], false
			err = p.readChoices(dec)
		case "usage":
			if p.hasUsage = !skipNull(dec); p.hasUsage {
				err = jsonv2.UnmarshalDecode(dec, &p.usage)
			}
		case "tokenpulse":
			if p.hasExt = !skipNull(dec); p.hasExt {
				err = jsonv2.UnmarshalDecode(dec, &p.ext)
			}
		case "timings":
			if p.hasLlama = !skipNull(dec); p.hasLlama {
				err = jsonv2.UnmarshalDecode(dec, &p.llama)
			}
		case "error":
			p.hasError = true
			err = dec.SkipValue()
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

func (p *chunkParser) readChoices(dec *jsontext.Decoder) error {
	if skipNull(dec) {
		return nil
	}
	if dec.PeekKind() != '[' {
		return errors.New("choices must be an array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		p.choices++
		if err := p.readChoice(dec); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

var errChoice = errors.New("a choice must be a JSON object")

// choiceState is what one choice holds so far; its buffers are the
// parser's, reused from choice to choice.
type choiceState struct {
	content, text, finish []byte
	reasoningContent      bool // a non-empty reasoning_content
	reasoning             bool // a non-empty reasoning
}

// readChoice reads one choice, then appends its content and text, in
// that order, to the stream's text.
func (p *chunkParser) readChoice(dec *jsontext.Decoder) error {
	c := &p.cur
	c.content, c.text, c.finish = c.content[:0], c.text[:0], c.finish[:0]
	c.reasoningContent, c.reasoning = false, false
	ok, err := beginObject(dec, errChoice)
	if !ok {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "delta":
			err = p.readDelta(dec)
		case "text":
			c.text, err = appendString(dec, c.text[:0])
		case "finish_reason":
			c.finish, err = appendString(dec, c.finish[:0])
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	if len(c.content)+len(c.text) > 0 {
		p.token = true
		p.text = append(append(p.text, c.content...), c.text...)
	}
	if c.reasoningContent || c.reasoning {
		p.token, p.reasoning = true, true
	}
	if len(c.finish) > 0 {
		// The last non-empty finish reason of the chunk counts.
		p.finish, p.hasFinish = append(p.finish[:0], c.finish...), true
	}
	_, err = dec.ReadToken()
	return err
}

var errDelta = errors.New("a delta must be a JSON object")

// readDelta reads a choice's delta into p.cur; a second delta merges into
// the first, a null one clears it.
func (p *chunkParser) readDelta(dec *jsontext.Decoder) error {
	c := &p.cur
	ok, err := beginObject(dec, errDelta)
	if !ok {
		if err == nil { // null
			c.content, c.reasoningContent, c.reasoning = c.content[:0], false, false
		}
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		var v jsontext.Value
		switch name.String() {
		case "content":
			c.content, err = appendString(dec, c.content[:0])
		case "reasoning_content":
			v, err = readString(dec)
			c.reasoningContent = len(v) > len(`""`)
		case "reasoning":
			v, err = readString(dec)
			c.reasoning = len(v) > len(`""`)
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// beginObject reads the start of a JSON object: ok is true when one
// starts; false, with a nil error, for a null (which it reads); false
// with notObject for a value of any other kind.
func beginObject(dec *jsontext.Decoder, notObject error) (ok bool, err error) {
	if skipNull(dec) {
		return false, nil
	}
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return false, err // a syntax error is the better message
		}
		return false, notObject
	}
	_, err = dec.ReadToken()
	return err == nil, err
}

// skipNull reads a null and reports whether there was one.
func skipNull(dec *jsontext.Decoder) bool {
	if dec.PeekKind() != 'n' {
		return false
	}
	_, err := dec.ReadToken()
	return err == nil
}

// readString reads a JSON string or null and returns it raw (quoted; nil
// for null). It is valid until the decoder's next call.
func readString(dec *jsontext.Decoder) (jsontext.Value, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case '"':
		return v, nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("want a string, got %s", v.Kind())
}

// appendString reads a JSON string or null and appends its value to dst.
func appendString(dec *jsontext.Decoder, dst []byte) ([]byte, error) {
	v, err := readString(dec)
	if err != nil || v == nil {
		return dst, err
	}
	// The decoder has checked the string; the only error left is invalid
	// UTF-8, which is replaced by U+FFFD as encoding/json does.
	dst, _ = jsontext.AppendUnquote(dst, v)
	return dst, nil
}

// Content reports whether an event's data is a content event as the
// Client counts it (and bounds with [Limits.ContentEvents]): a JSON chunk
// with a non-empty content, text or reasoning delta. "[DONE]", role-only
// and usage-only chunks, and data that is not a JSON chunk, are not.
func Content(data []byte) bool {
	var p chunkParser
	return p.parse(data) == nil && p.token
}
