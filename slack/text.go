package slack

import (
	"regexp"
	"strings"
)

// slackEscapes are the characters Slack reads as markup in message text and
// wants written as HTML entities when they are meant literally (Slack API
// docs, "Formatting text for app surfaces": Escaping text). Escaping < and >
// also disarms <!channel>, <@U123> and <url|text>.
var slackEscapes = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackMentions are the words Slack may turn into a notification of a whole
// channel or workspace when written plainly (@channel, @here, @everyone, and
// the older @group); a word joiner after the @ keeps them as text.
var slackMentions = regexp.MustCompile(`(?i)@(channel|here|everyone|group)\b`)

// Text makes a value safe to place in Slack mrkdwn text: an agent's words
// cannot link, mention or format anything.
func Text(s string) string {
	return slackMentions.ReplaceAllString(slackEscapes.Replace(s), "@\u2060$1")
}

// Code writes a value as inline code; a backquote in it would end the code
// span early, so it becomes a look-alike (U+02CB).
func Code(s string) string {
	return "`" + strings.ReplaceAll(Text(s), "`", "\u02cb") + "`"
}
