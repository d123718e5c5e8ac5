//go:build !amd64

package spec

// oneNUL is oneNULGo (the masked compare of nul_amd64.s is amd64's).
func oneNUL(name []byte) (sep int, one bool) { return oneNULGo(name) }
