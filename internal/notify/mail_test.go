package notify

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// received is one message an smtpd accepted.
type received struct {
	from string
	to   []string
	data []byte
	tls  bool
	user string
}

// smtpd is a real SMTP server (go-smtp) on a loopback port that keeps what
// it receives.
type smtpd struct {
	addr string
	mu   sync.Mutex
	msgs []received
	// user and pass, when set, are required (AUTH PLAIN).
	user, pass string
}

type smtpSession struct {
	d    *smtpd
	conn *smtp.Conn
	cur  received
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.d.user || pass != s.d.pass {
			return errors.New("invalid credentials")
		}
		s.cur.user = user
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.d.user != "" && s.cur.user == "" {
		return smtp.ErrAuthRequired
	}
	s.cur.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	_, s.cur.tls = s.conn.TLSConnectionState()
	s.d.mu.Lock()
	s.d.msgs = append(s.d.msgs, s.cur)
	s.d.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset()        { s.cur = received{user: s.cur.user} }
func (s *smtpSession) Logout() error { return nil }

// startSMTPD starts the server; with tlsConf it offers STARTTLS.
func startSMTPD(t *testing.T, tlsConf *tls.Config, user, pass string) *smtpd {
	return startSMTPDOn(t, tlsConf, false, user, pass)
}

// startSMTPDOn starts the server; with implicit it speaks TLS (tlsConf)
// from the first byte, as on port 465.
func startSMTPDOn(t *testing.T, tlsConf *tls.Config, implicit bool, user, pass string) *smtpd {
	t.Helper()
	d := &smtpd{user: user, pass: pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{d: d, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.TLSConfig = tlsConf
	srv.AllowInsecureAuth = tlsConf == nil
	srv.MaxMessageBytes = 10 << 20
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = l.Addr().String()
	if implicit {
		l = tls.NewListener(l, tlsConf)
	}
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	// Closing the listener too ends Serve even when Close came first.
	t.Cleanup(func() { srv.Close(); l.Close(); <-done })
	return d
}

func (d *smtpd) messages() []received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]received(nil), d.msgs...)
}

// selfSigned makes a certificate for 127.0.0.1 and the client config that
// trusts it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "tokenpulse test smtp"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

// part is one decoded MIME part.
type part struct {
	ctype, disposition, filename string
	body                         []byte
}

// parseMail reads a mail as a mail client would: headers with net/mail,
// the multipart body with mime/multipart, each part decoded.
func parseMail(t *testing.T, data []byte) (*mail.Message, []part) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a mail: %v", err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q (%v), want multipart/mixed", m.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	var parts []part
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("multipart: %v", err)
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		var body []byte
		switch enc := p.Header.Get("Content-Transfer-Encoding"); enc {
		case "base64":
			body, err = base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(raw)))
		case "quoted-printable":
			body, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		default:
			t.Fatalf("part with transfer encoding %q", enc)
		}
		if err != nil {
			t.Fatalf("decode part: %v", err)
		}
		disp, dparams, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts = append(parts, part{ctype: ct, disposition: disp, filename: dparams["filename"], body: body})
	}
	return m, parts
}

func TestMailToRealSMTPServer(t *testing.T) {
	serverTLS, clientTLS := selfSigned(t)
	tests := []struct {
		name     string
		tlsConf  *tls.Config
		implicit bool
		user     string
		mode     TLSMode
	}{
		{"plain relay on loopback", nil, false, "", NoTLS},
		{"STARTTLS with AUTH PLAIN", serverTLS, false, "ci-bot", StartTLS},
		{"implicit TLS with AUTH PLAIN", serverTLS, true, "ci-bot", ImplicitTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := startSMTPDOn(t, tt.tlsConf, tt.implicit, tt.user, "s3cret")
			run := reporttest.StallRun()
			msg := Build(run, reportURL, []string{"ttft.p95 overall: 80 → 120 ms"})
			atts := Timelines(run, report.Options{})
			if len(atts) == 0 {
				t.Fatal("the stall run has no offender timeline to attach")
			}
			cfg := SMTPConfig{
				Addr: d.addr, From: "tokenpulse@example.com", To: []string{"perf@example.com", "oncall@example.com"},
				Username: tt.user, TLS: tt.mode, TLSConfig: clientTLS,
			}
			if tt.user != "" {
				cfg.Password = "s3cret"
			}
			if err := Mail(context.Background(), cfg, msg, atts); err != nil {
				t.Fatal(err)
			}
			got := d.messages()
			if len(got) != 1 {
				t.Fatalf("server received %d messages, want 1", len(got))
			}
			r := got[0]
			if r.from != cfg.From || strings.Join(r.to, ",") != "perf@example.com,oncall@example.com" {
				t.Errorf("envelope from %q to %v", r.from, r.to)
			}
			if r.tls != (tt.mode != NoTLS) || r.user != tt.user {
				t.Errorf("tls %v, user %q; want tls %v, user %q", r.tls, r.user, tt.mode != NoTLS, tt.user)
			}

			m, parts := parseMail(t, r.data)
			subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
			if err != nil || subject != msg.Alert.Summary {
				t.Errorf("subject %q (%v), want %q", subject, err, msg.Alert.Summary)
			}
			if _, err := m.Header.Date(); err != nil {
				t.Errorf("Date header: %v", err)
			}
			if to, err := m.Header.AddressList("To"); err != nil || len(to) != 2 {
				t.Errorf("To header %v (%v)", to, err)
			}
			if len(parts) != 1+len(atts) {
				t.Fatalf("%d parts, want the text and %d attachments", len(parts), len(atts))
			}
			text := string(parts[0].body)
			if parts[0].ctype != "text/plain" {
				t.Errorf("first part is %s, want text/plain", parts[0].ctype)
			}
			for _, want := range []string{reporttest.StallPromptID, reporttest.StallRequestID, "gap.max <= 120ms", "limit 120 ms", reportURL, "80 → 120 ms"} {
				if !strings.Contains(text, want) {
					t.Errorf("body lacks %q:\n%s", want, text)
				}
			}
			for i, a := range atts {
				p := parts[1+i]
				if p.disposition != "attachment" || p.filename != a.Name || p.ctype != "image/svg+xml" {
					t.Errorf("attachment %d: %s %q %s, want attachment %q image/svg+xml", i, p.disposition, p.filename, p.ctype, a.Name)
				}
				if !bytes.Equal(p.body, a.Data) {
					t.Errorf("attachment %s: %d bytes differ from the %d sent", a.Name, len(p.body), len(a.Data))
				}
				if err := xml.Unmarshal(p.body, new(struct{})); err != nil {
					t.Errorf("attachment %s is not well-formed SVG: %v", a.Name, err)
				}
			}
			if !strings.Contains(atts[0].Name, reporttest.StallPromptID) || !bytes.Contains(parts[1].body, []byte(`class="stall"`)) {
				t.Errorf("first attachment %s should be the stalled prompt's timeline with its stall marked", atts[0].Name)
			}
		})
	}
}

func TestMailRefusals(t *testing.T) {
	msg := Build(reporttest.StallRun(), "", nil)
	t.Run("server without STARTTLS", func(t *testing.T) {
		d := startSMTPD(t, nil, "", "")
		err := Mail(context.Background(), SMTPConfig{Addr: d.addr, From: "a@example.com", To: []string{"b@example.com"}}, msg, nil)
		if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
			t.Errorf("error = %v, want one about STARTTLS", err)
		}
		if n := len(d.messages()); n != 0 {
			t.Errorf("server received %d messages in the clear", n)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		serverTLS, _ := selfSigned(t)
		d := startSMTPD(t, serverTLS, "", "")
		err := Mail(context.Background(), SMTPConfig{Addr: d.addr, From: "a@example.com", To: []string{"b@example.com"}}, msg, nil)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("error = %v, want a certificate error", err)
		}
		if n := len(d.messages()); n != 0 {
			t.Errorf("server received %d messages over an unverified connection", n)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		d := startSMTPD(t, nil, "ci-bot", "right")
		err := Mail(context.Background(), SMTPConfig{Addr: d.addr, From: "a@example.com", To: []string{"b@example.com"},
			Username: "ci-bot", Password: "wrong", TLS: NoTLS}, msg, nil)
		if err == nil || !strings.Contains(err.Error(), "auth as ci-bot") {
			t.Errorf("error = %v, want an auth failure", err)
		}
	})
	t.Run("password in the clear to another host", func(t *testing.T) {
		err := Mail(context.Background(), SMTPConfig{Addr: "mail.example.com:25", From: "a@example.com", To: []string{"b@example.com"},
			Username: "u", Password: "p", TLS: NoTLS}, msg, nil)
		if err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("error = %v, want a refusal before connecting", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		d := startSMTPD(t, nil, "", "")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Mail(ctx, SMTPConfig{Addr: d.addr, From: "a@example.com", To: []string{"b@example.com"}, TLS: NoTLS}, msg, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
	})
}

func TestParseSMTP(t *testing.T) {
	env := func(k string) string {
		if k == PasswordEnv {
			return "pw"
		}
		return ""
	}
	tests := []struct {
		name, url string
		want      SMTPConfig
		wantErr   string
	}{
		{
			name: "submission with user",
			url:  "smtp://ci@mail.example.com?from=ci@example.com&to=a@example.com&to=b@example.com",
			want: SMTPConfig{Addr: "mail.example.com:587", From: "ci@example.com", To: []string{"a@example.com", "b@example.com"},
				Username: "ci", Password: "pw", TLS: StartTLS},
		},
		{
			name: "smtps with port and comma list",
			url:  "smtps://mail.example.com:2465?from=ci@example.com&to=a@example.com,b@example.com",
			want: SMTPConfig{Addr: "mail.example.com:2465", From: "ci@example.com", To: []string{"a@example.com", "b@example.com"}, TLS: ImplicitTLS},
		},
		{
			name: "local relay without TLS",
			url:  "smtp://127.0.0.1:1025?from=ci@example.com&to=a@example.com&tls=none",
			want: SMTPConfig{Addr: "127.0.0.1:1025", From: "ci@example.com", To: []string{"a@example.com"}, TLS: NoTLS},
		},
		{name: "password in URL", url: "smtp://ci:pw@mail.example.com?from=a@b.c&to=d@e.f", wantErr: "not in the URL"},
		{name: "user without password env", url: "smtp://nobody@mail.example.com?from=a@b.c&to=d@e.f", wantErr: "TOKENPULSE_SMTP_PASSWORD is empty"},
		{name: "no recipient", url: "smtp://mail.example.com?from=a@b.c", wantErr: "no recipient"},
		{name: "bad sender", url: "smtp://mail.example.com?from=nobody&to=d@e.f", wantErr: "sender"},
		{name: "unknown parameter", url: "smtp://mail.example.com?from=a@b.c&to=d@e.f&cc=x@y.z", wantErr: "unknown parameter"},
		{name: "bad tls", url: "smtp://mail.example.com?from=a@b.c&to=d@e.f&tls=maybe", wantErr: "tls="},
		{name: "wrong scheme", url: "mailto:d@e.f", wantErr: "smtp://"},
		{name: "cleartext password to remote", url: "smtp://ci@mail.example.com?from=a@b.c&to=d@e.f&tls=none", wantErr: "refusing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := env
			if tt.name == "user without password env" {
				getenv = func(string) string { return "" }
			}
			got, err := ParseSMTP(tt.url, getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Addr != tt.want.Addr || got.From != tt.want.From || strings.Join(got.To, ",") != strings.Join(tt.want.To, ",") ||
				got.Username != tt.want.Username || got.Password != tt.want.Password || got.TLS != tt.want.TLS {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestComposeIsValidMIME(t *testing.T) {
	msg := Build(reporttest.StallRun(), reportURL, nil)
	msg.Alert.Summary = "tokenpulse: 2 thresholds crossed — Überprüfung"
	atts := []Attachment{
		{Name: "charts/timeline-7 complex.svg", ContentType: "image/svg+xml; charset=utf-8", Data: []byte("<svg/>")},
		{Name: "big.bin", Data: bytes.Repeat([]byte{0, 1, 2, 255}, 1000)},
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	b, err := Compose("tokenpulse@example.com", []string{"perf@example.com"}, msg, atts, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\r\n") {
		if len(line) > 998 || strings.Contains(line, "\n") {
			t.Fatalf("line %d breaks RFC 5322 (length %d or a bare LF)", i, len(line))
		}
	}
	m, parts := parseMail(t, b)
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if subject != msg.Alert.Summary {
		t.Errorf("subject %q, want %q", subject, msg.Alert.Summary)
	}
	if d, _ := m.Header.Date(); !d.Equal(now) {
		t.Errorf("date %v, want %v", d, now)
	}
	if len(parts) != 3 || parts[1].filename != "charts_timeline-7 complex.svg" || parts[2].ctype != "application/octet-stream" {
		t.Fatalf("parts %+v", parts)
	}
	if !bytes.Equal(parts[2].body, atts[1].Data) {
		t.Error("binary attachment does not round-trip")
	}
}
