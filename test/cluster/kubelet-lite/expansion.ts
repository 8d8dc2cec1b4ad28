// $(VAR) expansion as kubelet does it for env values, command and args (third_party/forked/golang/expansion,
// used by kubelet_pods.go#makeEnvironmentVariables and container/helpers.go#ExpandContainerCommandAndArgs):
// `$(NAME)` is replaced when NAME is defined, left as written otherwise; `$$` is an escaped `$`; any other `$` is
// literal.
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1]!;
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = name === '' ? undefined : lookup(name);
      out += value ?? `$(${name})`;
      i = close + 1;
    } else {
      out += ch + next;
      i += 2;
    }
  }
  return out;
}
