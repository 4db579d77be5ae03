package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// TLSMode says how Mail secures the SMTP connection.
type TLSMode string

// The TLS modes.
const (
	// StartTLS connects in plain text and upgrades with STARTTLS; a server
	// that does not offer it is an error. The default.
	StartTLS TLSMode = "starttls"
	// ImplicitTLS speaks TLS from the first byte (smtps, port 465).
	ImplicitTLS TLSMode = "tls"
	// NoTLS never encrypts: only for a relay on the same host or network.
	NoTLS TLSMode = "none"
)

// PasswordEnv is the environment variable ParseSMTP reads the SMTP
// password from.
const PasswordEnv = "TOKENPULSE_SMTP_PASSWORD"

// SMTPConfig says where and how Mail sends.
type SMTPConfig struct {
	// Addr is the server as HOST:PORT.
	Addr string
	// From is the sender address; To the recipients.
	From string
	To   []string
	// Username and Password authenticate with AUTH PLAIN when Username is
	// set. Keep the password out of command lines: ParseSMTP takes it from
	// the environment.
	Username string
	Password string
	// TLS is how the connection is secured (default StartTLS).
	TLS TLSMode
	// TLSConfig, when set, is used for TLS (tests set RootCAs); its
	// ServerName defaults to Addr's host.
	TLSConfig *tls.Config
	// Timeout bounds the whole exchange (default 30 s).
	Timeout time.Duration
	// Hello is the name given in EHLO (default "localhost").
	Hello string
}

// ParseSMTP reads an SMTP destination written as a URL:
//
//	smtp://[USER@]HOST[:PORT]?from=ADDR&to=ADDR[&to=ADDR...][&tls=starttls|none]
//	smtps://[USER@]HOST[:PORT]?from=ADDR&to=ADDR...
//
// smtp:// defaults to port 587 and STARTTLS; smtps:// to port 465 and
// implicit TLS. "to" may repeat or hold a comma-separated list. The
// password is never read from the URL (it would show in process lists and
// CI logs) but from getenv(PasswordEnv) when a user is given.
func ParseSMTP(rawURL string, getenv func(string) string) (SMTPConfig, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return SMTPConfig{}, fmt.Errorf("smtp url: %w", err)
	}
	var cfg SMTPConfig
	port := ""
	switch u.Scheme {
	case "smtp":
		cfg.TLS, port = StartTLS, "587"
	case "smtps":
		cfg.TLS, port = ImplicitTLS, "465"
	default:
		return SMTPConfig{}, errors.New("smtp url: want smtp:// or smtps://")
	}
	if u.Hostname() == "" {
		return SMTPConfig{}, errors.New("smtp url: no host")
	}
	if u.Port() != "" {
		port = u.Port()
	}
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	if u.User != nil {
		if _, set := u.User.Password(); set {
			return SMTPConfig{}, fmt.Errorf("smtp url: put the password in %s, not in the URL", PasswordEnv)
		}
		cfg.Username = u.User.Username()
		if getenv != nil {
			cfg.Password = getenv(PasswordEnv)
		}
		if cfg.Password == "" {
			return SMTPConfig{}, fmt.Errorf("smtp url names user %q but %s is empty", cfg.Username, PasswordEnv)
		}
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "from", "to", "tls":
		default:
			return SMTPConfig{}, fmt.Errorf("smtp url: unknown parameter %q (want from, to, tls)", k)
		}
	}
	cfg.From = q.Get("from")
	for _, to := range q["to"] {
		for _, a := range strings.Split(to, ",") {
			if a = strings.TrimSpace(a); a != "" {
				cfg.To = append(cfg.To, a)
			}
		}
	}
	if t := q.Get("tls"); t != "" {
		switch m := TLSMode(t); m {
		case StartTLS, NoTLS, ImplicitTLS:
			cfg.TLS = m
		default:
			return SMTPConfig{}, fmt.Errorf("smtp url: tls=%q, want starttls, tls or none", t)
		}
	}
	if err := cfg.check(); err != nil {
		return SMTPConfig{}, err
	}
	return cfg, nil
}

func (c SMTPConfig) check() error {
	if _, err := mail.ParseAddress(c.From); err != nil {
		return fmt.Errorf("smtp: sender %q: %w", c.From, err)
	}
	if len(c.To) == 0 {
		return errors.New("smtp: no recipient")
	}
	for _, to := range c.To {
		if _, err := mail.ParseAddress(to); err != nil {
			return fmt.Errorf("smtp: recipient %q: %w", to, err)
		}
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("smtp: address %q: %w", c.Addr, err)
	}
	switch c.TLS {
	case "", StartTLS, ImplicitTLS:
	case NoTLS:
		if c.Username != "" && !isLoopback(host) {
			return fmt.Errorf("smtp: refusing to send a password without TLS to %s", host)
		}
	default:
		return fmt.Errorf("smtp: unknown TLS mode %q", c.TLS)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Attachment is a file attached to an alert mail.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// Mail sends msg as a MIME mail: a multipart/mixed message whose first
// part is the alert as plain text (Alert.PlainText) and whose other parts
// are the attachments, base64-encoded. The subject is the alert's summary.
func Mail(ctx context.Context, cfg SMTPConfig, msg Message, attachments []Attachment) error {
	if err := cfg.check(); err != nil {
		return err
	}
	body, err := Compose(cfg.From, cfg.To, msg, attachments, time.Now())
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := send(ctx, cfg, body); err != nil {
		return fmt.Errorf("smtp %s: %w", cfg.Addr, err)
	}
	return nil
}

func send(ctx context.Context, cfg SMTPConfig, body []byte) error {
	host, _, _ := net.SplitHostPort(cfg.Addr)
	tlsConf := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
		if tlsConf.ServerName == "" {
			tlsConf.ServerName = host
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// Closing the connection when ctx ends unblocks any read or write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var c *smtp.Client
	switch cfg.TLS {
	case ImplicitTLS:
		c = smtp.NewClient(tls.Client(conn, tlsConf))
	case NoTLS:
		c = smtp.NewClient(conn)
	default:
		var err error
		c, err = smtp.NewClientStartTLS(conn, tlsConf)
		if err != nil {
			conn.Close()
			return fmt.Errorf("starttls (use tls=none only for a trusted relay): %w", err)
		}
	}
	defer c.Close()
	if cfg.TLS == ImplicitTLS || cfg.TLS == NoTLS {
		if err := c.Hello(helloName(cfg)); err != nil {
			return err
		}
	}
	if cfg.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("server does not offer AUTH")
		}
		if err := c.Auth(sasl.NewPlainClient("", cfg.Username, cfg.Password)); err != nil {
			return fmt.Errorf("auth as %s: %w", cfg.Username, err)
		}
	}
	if err := c.SendMail(cfg.From, cfg.To, bytes.NewReader(body)); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return err
	}
	return c.Quit()
}

func helloName(cfg SMTPConfig) string {
	if cfg.Hello != "" {
		return cfg.Hello
	}
	return "localhost"
}

// Compose writes the alert mail, headers and body, with CRLF line ends:
// From, To, Subject (the alert's summary), Date (now), Message-ID,
// MIME-Version, then a multipart/mixed body of the plain-text alert
// (quoted-printable) and the attachments (base64, 76-column lines).
func Compose(from string, to []string, msg Message, attachments []Attachment, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	subject := msg.Alert.Summary
	if subject == "" {
		subject = "tokenpulse alert"
	}
	id := make([]byte, 12)
	rand.Read(id)
	domain := "tokenpulse"
	if at := strings.LastIndexByte(from, '@'); at >= 0 {
		domain = strings.Trim(from[at+1:], "<> ")
	}
	h := []struct{ k, v string }{
		{"From", from},
		{"To", strings.Join(to, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id) + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": mw.Boundary()})},
	}
	var head bytes.Buffer
	for _, kv := range h {
		if strings.ContainsAny(kv.v, "\r\n") {
			return nil, fmt.Errorf("header %s holds a line break", kv.k)
		}
		head.WriteString(kv.k + ": " + kv.v + "\r\n")
	}
	head.WriteString("\r\n")

	text := msg.Alert.PlainText()
	if msg.Alert.Summary == "" {
		text = msg.Text
	}
	pw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {"text/plain; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return nil, err
	}
	qp := quotedprintable.NewWriter(pw)
	if _, err := qp.Write([]byte(text)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	for _, a := range attachments {
		name := strings.NewReplacer("/", "_", "\\", "_").Replace(a.Name)
		mediaType, params := "application/octet-stream", map[string]string{}
		if a.ContentType != "" {
			if mediaType, params, err = mime.ParseMediaType(a.ContentType); err != nil {
				return nil, fmt.Errorf("attachment %s: content type: %w", name, err)
			}
		}
		params["name"] = name
		ctype := mime.FormatMediaType(mediaType, params)
		disp := mime.FormatMediaType("attachment", map[string]string{"filename": name})
		if ctype == "" || disp == "" {
			return nil, fmt.Errorf("attachment %q: cannot write its name or type", a.Name)
		}
		aw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {ctype},
			"Content-Disposition":       {disp},
			"Content-Transfer-Encoding": {"base64"},
		})
		if err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(a.Data)
		for len(enc) > 76 {
			aw.Write([]byte(enc[:76] + "\r\n"))
			enc = enc[76:]
		}
		aw.Write([]byte(enc + "\r\n"))
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return append(head.Bytes(), buf.Bytes()...), nil
}
