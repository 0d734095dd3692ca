package b

import . "time"

func dotted() { Sleep(0) } // want `time.Sleep reads the host's clock`
