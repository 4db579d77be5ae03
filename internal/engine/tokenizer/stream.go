package tokenizer

import "unicode/utf8"

// StreamDecoder turns ids into text one at a time, as they are generated,
// without ever cutting a UTF-8 character in two: byte tokens can split a
// character over several ids, and the bytes of an unfinished character are
// held back until the ids that complete it arrive. Bytes that can never
// become valid UTF-8 are passed on as they are, so the concatenation of
// every Next and the final Flush equals Decode of all the ids.
//
// A StreamDecoder is for one stream and is not safe for concurrent use.
type StreamDecoder struct {
	t       *Tokenizer
	pending []byte
}

// NewStreamDecoder returns a decoder for one stream of ids.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder {
	return &StreamDecoder{t: t}
}

// Next adds id and returns the text that became complete with it (possibly
// "").
func (d *StreamDecoder) Next(id int32) string {
	d.pending = append(d.pending, d.t.Piece(id)...)
	cut := completeUpTo(d.pending)
	if cut == 0 {
		return ""
	}
	s := string(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return s
}

// Flush returns the bytes still held back (an unfinished character at the
// end of the stream) and empties the decoder.
func (d *StreamDecoder) Flush() string {
	s := string(d.pending)
	d.pending = d.pending[:0]
	return s
}

// completeUpTo returns the length of the prefix of b that can be emitted:
// everything but a trailing start of a character still missing bytes.
func completeUpTo(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
