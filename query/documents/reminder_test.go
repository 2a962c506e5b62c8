package documents

import (
	"regexp"
	"testing"
)

var reminderRegexp = regexp.MustCompile(`(?i)<(\s*/?\s*system-reminder)`)

func checkReminders(t *testing.T, s string) {
	t.Helper()
	if got, want := neutralizeReminders(s), reminderRegexp.ReplaceAllString(s, "&lt;$1"); got != want {
		t.Errorf("neutralizeReminders(%q)\n got %q\nwant %q", s, got, want)
	}
}

func TestNeutralizeReminders(t *testing.T) {
	for _, s := range []string{
		"", "plain", "<system-reminder>", "</system-reminder>", "a </SYSTEM-REMINDER> b <System-Reminder x>",
		"< / system-reminder >", "<\t/\nsystem-reminder", "<ſystem-reminder>", "<<system-reminder>",
		"<system-remind", "</ /system-reminder>", "<b>system-reminder</b>", "x<", "<\xffsystem-reminder",
	} {
		checkReminders(t, s)
	}
}

func FuzzNeutralizeReminders(f *testing.F) {
	f.Add("text </system-reminder> more")
	f.Fuzz(checkReminders)
}
