package store

import (
	"strings"
	"testing"
)

func TestIndexWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"ascii lower-cased", "World Cup FINAL", "world cup final"},
		{"punctuation splits", "COVID-19 AC/DC don't c++", "covid 19 ac dc don t c"},
		{"diacritics folded", "Thomas Müller, Élodie, crème brûlée", "thomas muller elodie creme brulee"},
		{"sharp s is ss", "Fußball STRAẞE", "fussball strasse"},
		{"stroked letters", "Øresund Łódź", "oresund lodz"},
		{"nfkc width", "ＦＩＦＡ ﬁnal ①", "fifa final 1"},
		{"nukta as sent", "सा\u095cी", "सा\u0921\u093cी"},
		{"nukta as typed", "सा\u0921\u093cी", "सा\u0921\u093cी"},
		{"hindi vowel signs stay", "हिन्दी गाने", "हिन्दी गाने"},
		{"tamil", "தமிழ் பாடல்", "தமிழ் பாடல்"},
		{"arabic harakat folded", "مَجْنُون🤯", "مجنون"},
		{"newer emoji glued after", "Home🤴 Crore🤑", "home crore"},
		{"emoji glued before", "🤩拉麵", "拉麵"},
		{"heart with selector", "❤️Love ❤Story", "love story"},
		{"zwj sequence", "Family👨‍👩‍👧Vlog", "family vlog"},
		{"skin tone", "Wave👋🏽Hello", "wave hello"},
		{"keycap", "Top1️⃣0", "top1 0"},
		{"joiners split", "a\u200db\u200cc", "a b c"},
		{"soft hyphen is invisible", "Fuß\u00adball", "fussball"},
		{"japanese bigrams", "焼鳥屋です", "焼鳥 鳥屋 屋で です"},
		{"single han", "日 x", "日 x"},
		{"run then latin", "最初のiPhone", "最初 初の iphone"},
		{"digits split a run", "2026年の夏", "2026 年の の夏"},
		{"katakana long vowel", "ラーメン", "ラー ーメ メン"},
		{"halfwidth katakana", "ﾗｰﾒﾝ", "ラー ーメ メン"},
		{"thai bigrams keep marks", "หมาป่า", "หม มา าป่ ป่า"},
		{"hangul bigrams", "서울에서", "서울 울에 에서"},
		{"square era", "㍻", "平成"},
		{"empty", "", ""},
		{"only symbols", "🤯 !!! ❤️", ""},
	} {
		if got := indexWords(tc.in); got != tc.want {
			t.Errorf("%s: indexWords(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestOffsets checks that every token points at the original bytes it came
// from, so a snippet can mark the text as it was sent.
func TestWordOffsets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string // the original text of each token
	}{
		{"Thomas Müller", []string{"Thomas", "Müller"}},
		{"Home🤴 ❤️Fußball", []string{"Home", "Fußball"}},
		{"सा\u095cी typed सा\u0921\u093cी", []string{"सा\u095cी", "typed", "सा\u0921\u093cी"}},
		{"焼鳥屋!", []string{"焼鳥", "鳥屋"}},
		{"ﾗｰﾒﾝ", []string{"ﾗｰ", "ｰﾒ", "ﾒﾝ"}},
	} {
		var got []string
		for _, tok := range wordTokens(tc.in) {
			got = append(got, tc.in[tok.Start:tok.End])
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wordTokens(%q) spans %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWordRunFlag(t *testing.T) {
	t.Parallel()
	toks := wordTokens("台 iPhone 台南")
	if len(toks) != 3 || !toks[0].Run || toks[1].Run || !toks[2].Run {
		t.Errorf("Tokens = %+v: want the CJK tokens marked Run", toks)
	}
}

func BenchmarkIndexWords(b *testing.B) {
	for _, tc := range []struct{ name, text string }{
		{"ascii", strings.Repeat("Every goal and every save from the world cup and the league. ", 20)},
		{"hindi", strings.Repeat("क्रिकेट विश्व कप: भारत बनाम पाकिस्तान – मुख्य अंश सा\u095cी ", 20)},
		{"japanese", strings.Repeat("焼鳥屋で最初の一杯、東京タワーの夜景🤩 ", 20)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				indexWords(tc.text)
			}
		})
	}
}
