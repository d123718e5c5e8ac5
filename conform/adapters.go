package conform

import (
	"fmt"

	"github.com/xpwc/xpwc/sim"
)

// GoAdapter is xpwc's own cache behind the protocol, under design name:
// "reference" is the cache as it is.
func GoAdapter(design string) (Adapter, error) {
	if design != "reference" {
		return Adapter{}, fmt.Errorf("conform: no adapter for design %q", design)
	}
	return Adapter{Name: "xpwc-go", Capabilities: Capabilities(), Format: "v3", Open: sim.OpenGo}, nil
}
