package suite

// Option configures Load, Parse, Resolve and Builtin.
type Option func(*options)

type options struct {
	validate func(expr string) error
}

// Validate passes every threshold expression of the suite to fn while
// loading; an expression that fn rejects becomes a load error located at
// the threshold's line. Package gate provides the parser to pass here.
func Validate(fn func(expr string) error) Option {
	return func(o *options) { o.validate = fn }
}

func collect(opts []Option) options {
	var o options
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	return o
}
