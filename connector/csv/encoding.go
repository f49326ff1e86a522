package csv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/syncd-io/syncd/connector"
)

// encodings are the file encodings the connector reads besides UTF-8,
// by the names the encoding setting takes: what spreadsheet programs
// write (Excel's "Unicode Text" is UTF-16 with a byte order mark, its
// "CSV" on Windows the system's code page, Windows-1252 in Western
// Europe and the Americas).
var encodings = map[string]encoding.Encoding{
	"utf-16":       unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), // a byte order mark tells the order; without, little-endian as Windows writes it
	"utf-16le":     unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
	"utf-16be":     unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"windows-1252": charmap.Windows1252,
	"iso-8859-1":   charmap.ISO8859_1,
	"iso-8859-15":  charmap.ISO8859_15,
	"macintosh":    charmap.Macintosh,
}

// encodingAliases are other usual spellings of the names above.
var encodingAliases = map[string]string{
	"utf16": "utf-16", "utf16le": "utf-16le", "utf16be": "utf-16be", "unicode": "utf-16",
	"cp1252": "windows-1252", "latin1": "iso-8859-1", "latin-1": "iso-8859-1", "latin9": "iso-8859-15", "mac-roman": "macintosh",
}

// lookupEncoding returns the decoder of a setting's encoding: nil for
// UTF-8, which is read as is.
func lookupEncoding(name string) (encoding.Encoding, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := encodingAliases[n]; ok {
		n = a
	}
	switch n {
	case "", "utf-8", "utf8":
		return nil, nil
	}
	if e, ok := encodings[n]; ok {
		return e, nil
	}
	names := []string{"utf-8"}
	for k := range encodings {
		names = append(names, k)
	}
	sort.Strings(names[1:])
	return nil, fmt.Errorf("%q not supported; use one of %s", name, strings.Join(names, ", "))
}

// Text returns the UTF-8 text of r, a file in the named encoding ("" or
// utf-8: r itself).
func Text(r io.Reader, name string) (io.Reader, error) {
	e, err := lookupEncoding(name)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return r, nil
	}
	return transform.NewReader(r, e.NewDecoder()), nil
}

// utf16BOM reports whether b starts with a UTF-16 byte order mark.
func utf16BOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF})
}

// errUTF16 is what reading a UTF-16 file as UTF-8 says.
var errUTF16 = errors.New("the file is UTF-16 (it starts with a UTF-16 byte order mark), as Excel's \"Unicode Text\" writes it: set encoding: utf-16")

// checkUTF16 refuses, for a file read as UTF-8, one that starts with a
// UTF-16 byte order mark, naming the setting that reads it.
func (s *Source) checkUTF16(f *os.File) error {
	if s.enc != nil {
		return nil
	}
	b := make([]byte, 2)
	if n, _ := f.ReadAt(b, 0); n == 2 && utf16BOM(b) {
		return connector.SchemaError(fmt.Errorf("read %s: %w", s.path, errUTF16))
	}
	return nil
}
