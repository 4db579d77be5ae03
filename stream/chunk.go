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
}

// parse reads one event's data. On error the stream's text is as it was
// before the event.
func (p *chunkParser) parse(data []byte) error {
	n := len(p.text)
	p.choices, p.token, p.reasoning = 0, false, false
	p.finish, p.hasFinish = p.finish[:0], false
	p.hasUsage, p.hasExt, p.hasLlama, p.hasError = false, false, false, false
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
// The walkers switch on each member name in place: handing the name to a
// function value would make it escape, an allocation per member.
func (p *chunkParser) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if ok, err := beginObject(dec, errNotObject); !ok {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "choices":
			err = p.readChoices(dec)
		case "usage":
			if !skipNull(dec) {
				p.usage = api.Usage{}
				p.hasUsage = true
				err = jsonv2.UnmarshalDecode(dec, &p.usage)
			}
		case "tokenpulse":
			if !skipNull(dec) {
				p.ext = api.Extension{}
				p.hasExt = true
				err = jsonv2.UnmarshalDecode(dec, &p.ext)
			}
		case "timings":
			if !skipNull(dec) {
				p.llama = api.LlamaTimings{}
				p.hasLlama = true
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

func (p *chunkParser) readChoice(dec *jsontext.Decoder) error {
	if ok, err := beginObject(dec, errChoice); !ok {
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
			err = p.content(dec)
		case "finish_reason":
			var v jsontext.Value
			if v, err = readString(dec); err == nil && len(v) > len(`""`) {
				// The last non-empty one counts.
				p.finish, _ = jsontext.AppendUnquote(p.finish[:0], v)
				p.hasFinish = true
			}
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

var errDelta = errors.New("a delta must be a JSON object")

func (p *chunkParser) readDelta(dec *jsontext.Decoder) error {
	if ok, err := beginObject(dec, errDelta); !ok {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch name.String() {
		case "content":
			err = p.content(dec)
		case "reasoning_content", "reasoning":
			var v jsontext.Value
			if v, err = readString(dec); err == nil && len(v) > len(`""`) {
				p.token, p.reasoning = true, true
			}
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

// content appends a content (or completion text) string to the text.
func (p *chunkParser) content(dec *jsontext.Decoder) error {
	n := len(p.text)
	var err error
	if p.text, err = appendString(dec, p.text); err != nil {
		return err
	}
	if len(p.text) > n {
		p.token = true
	}
	return nil
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
