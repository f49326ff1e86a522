package sqlkit

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Format is how a dialect writes the values whose text form differs
// between servers.
type Format struct {
	// Bool is the text of a boolean ("true", or "1" for a tinyint(1)).
	Bool func(bool) string
	// Time is the text of a time for the column.
	Time func(time.Time) string
	// List is the text of a list of values, or an error when the column
	// cannot hold one.
	List func([]string) (string, error)
	// Float is the text of a float that is not finite; nil refuses them.
	NonFinite func(float64) string
}

// Text returns a record value (string, integers, floats, bool,
// time.Time, []string or nil) in the text form the server reads, or nil
// for NULL.
func Text(v any, f Format) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int:
		return strconv.Itoa(v), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case float64:
		return floatText(v, f)
	case float32:
		return floatText(float64(v), f)
	case bool:
		return f.Bool(v), nil
	case time.Time:
		return f.Time(v), nil
	case []string:
		if f.List == nil {
			return nil, fmt.Errorf("a list of values")
		}
		return f.List(v)
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

func floatText(v float64, f Format) (any, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		if f.NonFinite == nil {
			return nil, fmt.Errorf("%v is not a number the column can hold", v)
		}
		return f.NonFinite(v), nil
	}
	return strconv.FormatFloat(v, 'g', -1, 64), nil
}
