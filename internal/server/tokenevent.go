package server

import "strconv"

// tokenEvent builds the SSE frames of one stream's token events, the
// per-token path of the server: the same bytes as an [api.Chunk] marshalled
// by encoding/json (HTML escaping off) and framed by [sse.Encoder] with
// the request id, but appended to a caller's buffer with no reflection and
// no allocation. What is the same for every event of the stream (the id
// line, and the chunk's id, object, created and model) is encoded once,
// when the stream begins.
//
// The frame is "id: ID\ndata: JSON\n\n": JSON as encoding/json writes it
// holds no line break, so its data is one line. ID is a valid request id
// (printable ASCII, see [ValidRequestID]), which sse.Encoder would write
// as it is.
type tokenEvent struct {
	// head is the frame up to the choice's first field:
	// `id: ID\ndata: {"id":…,"object":…,"created":…,"model":…,"choices":[{"index":0,`.
	head []byte
	chat bool
}

// newTokenEvent encodes the part of a stream's token events that never
// changes.
func newTokenEvent(id, chunkID, object string, created int64, model string, chat bool) tokenEvent {
	h := make([]byte, 0, 64+len(id)+len(chunkID)+len(object)+len(model))
	if id != "" {
		h = append(h, "id: "...)
		h = append(h, id...)
		h = append(h, '\n')
	}
	h = append(h, `data: {"id":`...)
	h = appendJSONString(h, chunkID)
	h = append(h, `,"object":`...)
	h = appendJSONString(h, object)
	h = append(h, `,"created":`...)
	h = strconv.AppendInt(h, created, 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, model)
	h = append(h, `,"choices":[{"index":0,`...)
	return tokenEvent{head: h, chat: chat}
}

// append appends the frame of one token event to dst: the piece's text
// (a reasoning token's, for a chat stream, when reasoning is set), the
// assistant's role when first, and the tokenpulse extension (serverNS and
// offsetNS are left out when 0, as omitempty does; tokens too).
func (t *tokenEvent) append(dst []byte, text string, reasoning, first bool, serverNS, offsetNS int64, index, tokens int) []byte {
	dst = append(dst, t.head...)
	if t.chat {
		dst = append(dst, `"delta":{`...)
		if first {
			dst = append(dst, `"role":"assistant"`...)
		}
		if text != "" {
			if first {
				dst = append(dst, ',')
			}
			if reasoning {
				dst = append(dst, `"reasoning_content":`...)
			} else {
				dst = append(dst, `"content":`...)
			}
			dst = appendJSONString(dst, text)
		}
		dst = append(dst, '}')
	} else {
		dst = append(dst, `"text":`...)
		dst = appendJSONString(dst, text)
	}
	dst = append(dst, `,"finish_reason":null}],"tokenpulse":{`...)
	if serverNS != 0 {
		dst = append(dst, `"server_ns":`...)
		dst = strconv.AppendInt(dst, serverNS, 10)
		dst = append(dst, ',')
	}
	if offsetNS != 0 {
		dst = append(dst, `"offset_ns":`...)
		dst = strconv.AppendInt(dst, offsetNS, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if tokens != 0 {
		dst = append(dst, `,"tokens":`...)
		dst = strconv.AppendInt(dst, int64(tokens), 10)
	}
	return append(dst, "}}\n\n"...)
}
