package suite

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// cnID completes 17 digits with their ISO 7064 MOD 11-2 check character.
func cnID(first17 string) string {
	weights := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(first17[i]-'0') * w
	}
	return first17 + string("10X98765432"[sum%11])
}

// wrongLast replaces the last character of an ID or card number by
// another digit, which breaks its check digit.
func wrongLast(s string) string {
	last := s[len(s)-1]
	next := byte('0')
	if last >= '0' && last < '9' {
		next = last + 1
	}
	return s[:len(s)-1] + string(next)
}

func TestImportCheckDigits(t *testing.T) {
	// Published examples: the national standard's sample ID, test cards.
	for _, id := range []string{"11010519491231002X", cnID("44030819990101123"), cnID("31011520000229004")} {
		if !validCNID(id) {
			t.Errorf("validCNID(%s) = false", id)
		}
		if validCNID(wrongLast(id)) {
			t.Errorf("validCNID(%s) = true", wrongLast(id))
		}
	}
	if got := cnID("11010519491231002"); got != "11010519491231002X" {
		t.Errorf("cnID: got %s", got)
	}
	if validCNID(cnID("11010518991231002")) || validCNID(cnID("11010519491331002")) || validCNID(cnID("01010519491231002")) {
		t.Error("accepted an ID with a valid check digit but an impossible birth date or area")
	}
	for _, card := range []string{"4111111111111111", "5500000000000004", "378282246310005", "6222021234567891233", "6212261202011580"} {
		if !luhn(card) {
			t.Errorf("luhn(%s) = false", card)
		}
		if luhn(wrongLast(card)) {
			t.Errorf("luhn(%s) = true", wrongLast(card))
		}
	}
}

func TestImportDeidentify(t *testing.T) {
	id := cnID("44030819990101123")
	tests := []struct {
		in, want string
		counts   MaskCounts
	}{
		// E-mail, before any number in it is looked at.
		{"write to jane.doe+tp@example.co.uk today", "write to [EMAIL] today", MaskCounts{MaskEmail: 1}},
		{"13812345678@qq.com", "[EMAIL]", MaskCounts{MaskEmail: 1}},
		{"not an address: a@b, @home, x@localhost", "not an address: a@b, @home, x@localhost", MaskCounts{}},

		// Chinese resident identity numbers: only with a valid check digit.
		{"身份证11010519491231002X，", "身份证[ID]，", MaskCounts{MaskID: 1}},
		{"id 11010519491231002x.", "id [ID].", MaskCounts{MaskID: 1}},
		{"号码" + id + "和" + wrongLast(id), "号码[ID]和" + wrongLast(id), MaskCounts{MaskID: 1}},
		{"110105 19491231 002X", "[ID]", MaskCounts{MaskID: 1}},
		{"code 11010519491231002XY", "code 11010519491231002XY", MaskCounts{}},
		{"SSN 123-45-6789, not 000-12-3456 or 666-12-3456", "SSN [ID], not 000-12-3456 or 666-12-3456", MaskCounts{MaskID: 1}},

		// Bank cards: Luhn, whole or in groups.
		{"card 4111 1111 1111 1111 and 4111-1111-1111-1111", "card [CARD] and [CARD]", MaskCounts{MaskCard: 2}},
		{"card 4111 1111 1111 1112", "card 4111 1111 1111 1112", MaskCounts{}},
		{"银行卡6222021234567891233被冻结", "银行卡[CARD]被冻结", MaskCounts{MaskCard: 1}},
		{"6222021234567891234", "6222021234567891234", MaskCounts{}},
		{"amex 3782 822463 10005", "amex [CARD]", MaskCounts{MaskCard: 1}},
		{"(4111111111111111)", "([CARD])", MaskCounts{MaskCard: 1}},
		{"4111 1111 1111 1111 2025", "[CARD] 2025", MaskCounts{MaskCard: 1}},
		{"41111 11111 11111 1", "41111 11111 11111 1", MaskCounts{}}, // not a card's grouping

		// Phones.
		{"手机13812345678，", "手机[PHONE]，", MaskCounts{MaskPhone: 1}},
		{"call 138 1234 5678 or 139-1234-5678", "call [PHONE] or [PHONE]", MaskCounts{MaskPhone: 2}},
		{"+86 138 1234 5678", "[PHONE]", MaskCounts{MaskPhone: 1}},
		{"+8613812345678", "[PHONE]", MaskCounts{MaskPhone: 1}},
		{"+44 20 7946 0958, +1 (555) 234-5678, +33 6 12 34 56 78", "[PHONE], [PHONE], [PHONE]", MaskCounts{MaskPhone: 3}},
		{"(555) 234-5678 or 555.234.5678 or 1-800-555-0199", "[PHONE] or [PHONE] or [PHONE]", MaskCounts{MaskPhone: 3}},
		{"020 7946 0958, 010-12345678, (010)12345678, 06 12 34 56 78", "[PHONE], [PHONE], [PHONE], [PHONE]", MaskCounts{MaskPhone: 4}},
		{"0044 20 7946 0958", "[PHONE]", MaskCounts{MaskPhone: 1}},
		{"room 12 13912345678", "room 12 [PHONE]", MaskCounts{MaskPhone: 1}},
		{"12345678901 and 123812345678", "12345678901 and 123812345678", MaskCounts{}}, // not 1[3-9], or 12 digits

		// Against CJK text, with every separator the docs list.
		{"电话138.1234.5678", "电话[PHONE]", MaskCounts{MaskPhone: 1}},
		{"电话：138.1234.5678。", "电话：[PHONE]。", MaskCounts{MaskPhone: 1}},
		{"电话138 1234 5678谢谢，或139-1234-5678转", "电话[PHONE]谢谢，或[PHONE]转", MaskCounts{MaskPhone: 2}},
		{"号码是555.234.5678。", "号码是[PHONE]。", MaskCounts{MaskPhone: 1}},
		{"电话（010）12345678，传真(010)87654321。", "电话[PHONE]，传真[PHONE]。", MaskCounts{MaskPhone: 2}},
		{"邮箱jane@example.com谢谢", "邮箱[EMAIL]谢谢", MaskCounts{MaskEmail: 1}},
		{"身份证号11010519491231002X谢谢", "身份证号[ID]谢谢", MaskCounts{MaskID: 1}},
		{"卡号4111 1111 1111 1111。", "卡号[CARD]。", MaskCounts{MaskCard: 1}},
		{"版本138.1234.5678.9，138.1234.56789", "版本138.1234.5678.9，138.1234.56789", MaskCounts{}}, // a decimal part; not 3-4-4
		{"（2023）年（12）月", "（2023）年（12）月", MaskCounts{}},

		// Ordinary numbers stay.
		{"In 2023 we shipped 1500 units at 3.50 each; in 2024 growth was 12%.", "In 2023 we shipped 1500 units at 3.50 each; in 2024 growth was 12%.", MaskCounts{}},
		{"on 2024-01-15 at 10:30, 1999-2003, 2024.01.15", "on 2024-01-15 at 10:30, 1999-2003, 2024.01.15", MaskCounts{}},
		{"1,000,000 people; 10 000 000 000 stars; 1+1=2", "1,000,000 people; 10 000 000 000 stars; 1+1=2", MaskCounts{}},
		{"ip 192.168.100.200, version 1.2.3.4, pi 3.14159265358979", "ip 192.168.100.200, version 1.2.3.4, pi 3.14159265358979", MaskCounts{}},
		{"血压150/95，空腹血糖6.8，体温38.5度", "血压150/95，空腹血糖6.8，体温38.5度", MaskCounts{}},
		{"order 1234567890", "order 1234567890", MaskCounts{}}, // a bare ten-digit number
		{"", "", MaskCounts{}},
	}
	for _, tt := range tests {
		got, counts := Deidentify(tt.in)
		if got != tt.want || !reflect.DeepEqual(counts, tt.counts) {
			t.Errorf("Deidentify(%q)\n got  %q %v\n want %q %v", tt.in, got, counts, tt.want, tt.counts)
		}
	}
}

// FuzzImportDeidentify holds that Deidentify never panics, keeps valid UTF-8
// valid, counts each placeholder it writes, and finds nothing more in its
// own output.
func FuzzImportDeidentify(f *testing.F) {
	for _, s := range []string{
		"手机13812345678，身份证11010519491231002X", "card 4111 1111 1111 1111", "+44 (0)20 7946 0958",
		"(555) 234-5678", "a@b.co 1.2.3", "电话（010）12345678", "（（1", "1）（2", "138.1234.5678", "110105 19491231 002X", "+", "(", "0", "1-", "((1", "+(1)2",
		"123-45-6789", "00 00 00 00 00", strings.Repeat("1 ", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, counts := Deidentify(in)
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("Deidentify(%q) = %q: invalid UTF-8", in, out)
		}
		for _, m := range []string{MaskPhone, MaskEmail, MaskID, MaskCard} {
			if got := strings.Count(out, m) - strings.Count(in, m); got != counts[m] {
				t.Fatalf("Deidentify(%q) = %q: %d new %s, counted %d", in, out, got, m, counts[m])
			}
		}
		again, more := Deidentify(out)
		if again != out {
			t.Fatalf("Deidentify(%q) = %q, and again %q (%v)", in, out, again, more)
		}
	})
}
