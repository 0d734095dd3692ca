package allowed

import "time"

func Other() time.Time { return time.Now() } // want `time.Now reads the host's clock`
