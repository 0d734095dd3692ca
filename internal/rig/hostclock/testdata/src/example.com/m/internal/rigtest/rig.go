package rigtest

import "time"

func Wait() { time.Sleep(time.Millisecond) }
