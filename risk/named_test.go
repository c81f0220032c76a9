package risk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestNamedCredentialsAreSecrets: a value the text around it names a
// credential (an environment assignment, an option, curl's user:password, a
// URL query parameter, a password in SQL, a JSON key) is a secret whatever
// its entropy: tagged, concealed where it stands so the command stays
// readable, and revealed back exactly.
func TestNamedCredentialsAreSecrets(t *testing.T) {
	for _, tc := range []struct {
		name, key, arg string
		secrets        []string // must be gone
		kept           []string // must stay readable
		kind           string
	}{
		{"PGPASSWORD", "command", "PGPASSWORD=hunter2 psql -h db.internal -U app", []string{"hunter2"}, []string{"PGPASSWORD=", " psql -h db.internal -U app"}, "env_credential"},
		{"MYSQL_PWD", "command", "MYSQL_PWD='pw 12' mysql -u root", []string{"pw 12"}, []string{"MYSQL_PWD=", " mysql -u root"}, "env_credential"},
		{"AWS secret", "command", "AWS_SECRET_ACCESS_KEY=abc aws s3 ls", []string{"=abc"}, []string{"AWS_SECRET_ACCESS_KEY=", " aws s3 ls"}, "env_credential"},
		{"export", "command", `export GITHUB_TOKEN="tok1" && gh pr list`, []string{"tok1"}, []string{"export GITHUB_TOKEN=", " && gh pr list"}, "env_credential"},
		{"env", "command", "env API_KEY=k3y ./deploy.sh", []string{"k3y"}, []string{"env API_KEY=", " ./deploy.sh"}, "env_credential"},
		{"two assignments", "command", "DB_PASS=aa NPM_AUTH=bb npm ci", []string{"=aa", "=bb"}, []string{"DB_PASS=", " NPM_AUTH=", " npm ci"}, "env_credential"},
		{"camel case", "command", "dbPassword=sesame ./run", []string{"sesame"}, []string{"dbPassword=", " ./run"}, "env_credential"},
		{"in a script", "command", "set -e\ncd /srv\nPGPASSWORD=hunter2 psql -c 'select 1'\necho done", []string{"hunter2"}, []string{"set -e\ncd /srv\nPGPASSWORD=", " psql -c 'select 1'\necho done"}, "env_credential"},
		{"quoted over lines", "command", "export API_TOKEN=\"ab\ncd\" && run", []string{"ab\ncd"}, []string{"export API_TOKEN=", " && run"}, "env_credential"},
		{"--password=", "command", "mysql --password=hunter2 -u root prod", []string{"hunter2"}, []string{"mysql --password=", " -u root prod"}, "option_credential"},
		{"--password value", "command", "tool login --password hunter2 --user me", []string{"hunter2"}, []string{"tool login --password ", " --user me"}, "option_credential"},
		{"--token", "command", "vault login --token s.abc", []string{"s.abc"}, []string{"vault login --token "}, "option_credential"},
		{"--api-key", "command", "cli --api-key=abc123 list", []string{"abc123"}, []string{"cli --api-key=", " list"}, "option_credential"},
		{"--client-secret", "command", "az login --service-principal --client-secret 'p w' -u app", []string{"p w"}, []string{"az login --service-principal --client-secret ", " -u app"}, "option_credential"},
		{"--secret", "command", "tool --secret=xyzzy run", []string{"xyzzy"}, []string{"tool --secret=", " run"}, "option_credential"},
		{"mysql -p", "command", "mysql -uroot -phunter2 -h db prod", []string{"hunter2"}, []string{"mysql -uroot -p", " -h db prod"}, "option_credential"},
		{"mysqldump -p quoted", "command", "mysqldump -u root -p'hun ter2' prod > dump.sql", []string{"hun ter2"}, []string{"mysqldump -u root -p", " prod > dump.sql"}, "option_credential"},
		{"sshpass -p", "command", "sshpass -p hunter2 ssh admin@host uptime", []string{"hunter2"}, []string{"sshpass -p ", " ssh admin@host uptime"}, "option_credential"},
		{"sshpass -v -p", "command", "sshpass -v -phunter2 ssh host", []string{"hunter2"}, []string{"sshpass -v -p", " ssh host"}, "option_credential"},
		{"docker login -p", "command", "docker login -u me -p hunter2 registry.example.com", []string{"hunter2"}, []string{"docker login -u me -p ", " registry.example.com"}, "option_credential"},
		{"curl -u", "command", "curl -u admin:hunter2 https://x.example.com/", []string{"hunter2"}, []string{"curl -u admin:", " https://x.example.com/"}, "curl_password"},
		{"curl --user", "command", "curl -s --user 'admin:hunter2' https://x.example.com/", []string{"hunter2"}, []string{"curl -s --user 'admin:", "' https://x.example.com/"}, "curl_password"},
		{"query password", "url", "https://x.example.com/login?user=a&password=hunter2&x=1", []string{"hunter2"}, []string{"https://x.example.com/login?user=a&password=", "&x=1"}, "query_credential"},
		{"query token in a command", "command", "curl 'https://x.example.com/api?access_token=abc&page=2'", []string{"abc&"}, []string{"curl 'https://x.example.com/api?access_token=", "&page=2'"}, "query_credential"},
		{"query sig", "url", "https://acct.blob.core.windows.net/c/b?sv=2022&sig=AbC%2Bd", []string{"AbC%2Bd"}, []string{"?sv=2022&sig="}, "query_credential"},
		{"query signature", "url", "https://b.s3.amazonaws.com/k?X-Amz-Signature=fe12&X-Amz-Expires=60", []string{"fe12"}, []string{"X-Amz-Signature=", "&X-Amz-Expires=60"}, "query_credential"},
		{"query api_key", "url", "https://x.example.com/?api_key=k1", []string{"=k1"}, []string{"https://x.example.com/?api_key="}, "query_credential"},
		{"SQL WITH PASSWORD", "sql", "CREATE USER app WITH PASSWORD 'hunter2'", []string{"hunter2"}, []string{"CREATE USER app WITH PASSWORD "}, "sql_password"},
		{"SQL ENCRYPTED PASSWORD", "sql", "ALTER ROLE app ENCRYPTED PASSWORD 'it''s'; SELECT 1", []string{"it''s"}, []string{"ALTER ROLE app ENCRYPTED PASSWORD ", "; SELECT 1"}, "sql_password"},
		{"SQL IDENTIFIED BY", "sql", "CREATE USER 'u'@'%' IDENTIFIED BY 'hunter2'", []string{"hunter2"}, []string{"CREATE USER 'u'@'%' IDENTIFIED BY "}, "sql_password"},
		{"SQL IDENTIFIED WITH", "sql", "ALTER USER u IDENTIFIED WITH mysql_native_password BY 'hunter2'", []string{"hunter2"}, []string{"ALTER USER u IDENTIFIED WITH mysql_native_password BY "}, "sql_password"},
		{"SQL in psql", "command", `psql -c "ALTER USER app PASSWORD 'hunter2'" prod`, []string{"hunter2"}, []string{`psql -c "ALTER USER app PASSWORD `, `" prod`}, "sql_password"},
		{"Authorization header", "command", "curl -H 'Authorization: Basic YTpi' https://x.example.com/", []string{"YTpi"}, []string{"curl -H 'Authorization: Basic ", "' https://x.example.com/"}, "header_credential"},
		{"Authorization bearer", "command", `curl -H "authorization: bearer abc" https://x.example.com/`, []string{"abc"}, []string{`curl -H "authorization: bearer `}, "header_credential"},
		{"X-Api-Key header", "command", "curl -H 'X-Api-Key: k1' https://x.example.com/", []string{"k1"}, []string{"curl -H 'X-Api-Key: ", "' https://x.example.com/"}, "header_credential"},
		{"Cookie header", "command", "curl -H 'Cookie: sid=abc; theme=dark' https://x.example.com/", []string{"sid=abc", "dark"}, []string{"curl -H 'Cookie: ", "' https://x.example.com/"}, "header_credential"},
		{"form body", "command", "curl -d 'user=me&password=hunter2' https://x.example.com/login", []string{"hunter2"}, []string{"user=me&password=", "' https://x.example.com/login"}, "query_credential"},
		{"form field", "command", "curl -d password=hunter2 https://x.example.com/login", []string{"hunter2"}, []string{"curl -d password=", " https://x.example.com/login"}, "env_credential"},
		{"JSON body", "command", `curl -d '{"user":"me","password":"hunter2"}' https://x.example.com/login`, []string{"hunter2"}, []string{`{"user":"me","password":"`, `"}' https://x.example.com/login`}, "json_credential"},
		{"JSON pass", "pass", "hunter2", []string{"hunter2"}, nil, "named_pass"},
		{"JSON passwd", "passwd", "x", []string{`"x"`}, nil, "named_passwd"},
		{"JSON client_secret", "client_secret", "abc", []string{"abc"}, nil, "named_client_secret"},
		{"JSON apiKey", "apiKey", "abc", []string{"abc"}, nil, "named_apikey"},
		{"JSON private_key", "private_key", "k", []string{`"k"`}, nil, "named_private_key"},
		{"JSON token", "token", "t0k", []string{"t0k"}, nil, "named_token"},
	} {
		args := map[string]any{tc.key: tc.arg}
		facts, tags := ScanArgs(map[string]any{tc.key: tc.arg})
		if len(facts) != 1 || facts[0].Kind != tc.kind || !slices.Contains(tags, "secrets") {
			t.Errorf("%s: facts %+v tags %v, want one %s", tc.name, facts, tags, tc.kind)
		}
		out, found := Conceal(args)
		b, _ := json.Marshal(out)
		text := string(b)
		for _, s := range tc.secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s: %q still in %s", tc.name, s, text)
			}
		}
		for _, s := range tc.kept {
			s, _ := json.Marshal(s)
			if !strings.Contains(text, strings.Trim(string(s), `"`)) {
				t.Errorf("%s: %s no longer readable in %s", tc.name, s, text)
			}
		}
		if len(found) == 0 || !strings.Contains(text, "["+tc.kind+" sha256:") {
			t.Errorf("%s: concealed as %s (%+v)", tc.name, text, found)
			continue
		}
		again, more := Conceal(map[string]any{tc.key: out[tc.key]})
		if again[tc.key] != out[tc.key] || len(more) != 0 {
			t.Errorf("%s: concealing twice: %v, %+v", tc.name, again[tc.key], more)
		}
		back, err := Reveal(out, found)
		if err != nil || back[tc.key] != tc.arg {
			t.Errorf("%s: revealed as %v: %v", tc.name, back[tc.key], err)
		}
		if tc.key == "command" || tc.key == "url" || tc.key == "sql" { // as in facts derived from the text
			if got := ConcealShapes(tc.arg); strings.Contains(got, tc.secrets[0]) {
				t.Errorf("%s: ConcealShapes left %q in %s", tc.name, tc.secrets[0], got)
			}
		}
	}
}

// TestNamedCredentialsNotSecrets: names that only look like a
// credential's, values that are variables, and options without a value
// are no secret.
func TestNamedCredentialsNotSecrets(t *testing.T) {
	for _, args := range []map[string]any{
		{"command": "PWD=/home/x ls"},
		{"command": "OLDPWD=/tmp cd -"},
		{"command": "PGPASSWORD=$PW psql -h db"},
		{"command": `export GITHUB_TOKEN="${GH}"`},
		{"command": "PGPASSWORD= psql"},
		{"command": "AWS_ACCESS_KEY_ID=abc aws s3 ls"},
		{"command": "POSTGRES_PASSWORD_FILE=/run/pw docker compose up"},
		{"command": "echo hunter2 | docker login --password-stdin -u me registry.example.com"},
		{"command": "psql --no-password -h db"},
		{"command": "mysql --password -u root"},
		{"command": "git log --author=jane --pretty=oneline"},
		{"command": "ssh -p 2222 host"},
		{"command": "mysql -h db -P 3306 -p prod"},
		{"command": "mkdir -p build && mysql -u root prod < schema.sql"},
		{"command": "docker login -u me --password-stdin registry.example.com"},
		{"command": "scp -P 2222 -p a host:b"},
		{"command": "sshpass -f pw.txt ssh -p 22 host uptime"},
		{"command": "docker run -u 1000:1000 alpine"},
		{"command": "tool --token-limit 500 --auth-type basic"},
		{"command": "curl -u admin:$PASS https://x.example.com/"},
		{"command": "go test -run TestPassword ./..."},
		{"command": "curl -H 'Accept: application/json' -H 'Content-Type: text/plain' https://x.example.com/"},
		{"command": `echo '{"token_type":"bearer","user":"me"}'`},
		{"command": "kubectl get secret my-secret -o yaml"},
		{"command": "git commit -m 'fix: token refresh'"},
		{"command": "grep -rn password src/"},
		{"url": "https://x.example.com/search?q=password&page=2"},
		{"url": "https://x.example.com/?token_type=bearer"},
		{"sql": "SELECT password FROM accounts WHERE id = 1"},
		{"sql": "ALTER USER app PASSWORD NULL"},
		{"author": "jane", "max_tokens": "100", "token_type": "bearer", "password_file": "/run/pw"},
		{"password": "$PW"},
		{"password": "***"},
		{"token": "no token given here"},
	} {
		if facts, tags := ScanArgs(args); len(facts) != 0 || slices.Contains(tags, "secrets") {
			t.Errorf("%v: %+v %v, want no secret", args, facts, tags)
		}
		if _, found := Conceal(args); len(found) != 0 {
			t.Errorf("%v: concealed %+v", args, found)
		}
	}
}

// TestCredentialName: the rule that makes a name a credential's.
func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"PGPASSWORD": true, "MYSQL_PWD": true, "PWD": false, "OLDPWD": false, "AWS_SECRET_ACCESS_KEY": true,
		"AWS_ACCESS_KEY_ID": false, "GITHUB_TOKEN": true, "API_KEY": true, "apiKey": true, "X-Api-Key": true,
		"client_secret": true, "private_key": true, "PRIVATE_KEY_PATH": false, "DB_PASS": true, "pass": true,
		"pass-fds": false, "NPM_AUTH": true, "auth-type": false, "author": false, "GIT_AUTHOR_NAME": false,
		"SSH_ASKPASS": false, "password-stdin": false, "no-password": false, "token_type": false,
		"max_tokens": false, "GOOGLE_APPLICATION_CREDENTIALS": true, "sig": true, "X-Amz-Signature": true,
		"signing_key": true, "key": false, "keyfile": false, "passphrase": true, "GITHUBTOKEN": true, "q": false,
	} {
		if got := credentialName(name); got != want {
			t.Errorf("credentialName(%q) = %v, want %v", name, got, want)
		}
	}
}
