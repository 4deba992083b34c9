package randmsg

// Options tune Fill. The zero value is usable.
type Options struct {
	// MaxDepth is how deep messages nest below the filled one; message
	// fields at that depth stay unset. 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxLen is the largest number of elements of a list or entries of a
	// map. 0 means DefaultMaxLen.
	MaxLen int
	// UndefinedEnums lets open enum fields occasionally hold a number their
	// enum does not define.
	UndefinedEnums bool
	// Unknown occasionally appends unknown fields to filled messages.
	Unknown bool
}

// Defaults of Options.
const (
	DefaultMaxDepth = 3
	DefaultMaxLen   = 3
)

func (o Options) maxDepth() int {
	if o.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

func (o Options) maxLen() int {
	if o.MaxLen <= 0 {
		return DefaultMaxLen
	}
	return o.MaxLen
}
