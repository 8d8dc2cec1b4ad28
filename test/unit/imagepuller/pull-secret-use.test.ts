// Which pull secrets a tag uses (hole 4 of issue 26): only those of its own owners, whoever else shares the image,
// and one tenant's malformed secret never fails another tenant's pull or shows up named in its messages.
import assert from 'node:assert/strict';
import { tagMayUseSecret, tagOwnerKeys, secretReferences } from '../../../src/api/pull-secret-use.js';
import {
  PullSecretProblem,
  PullSecretStore,
  skippedSecretsMessage,
} from '../../../src/daemon/imagepuller/pull-secrets.js';
import type { PullSecretObject } from '../../../src/daemon/imagepuller/docker-keyring.js';
import { FakeClock } from '../../../src/util/clock.js';
import { dockerConfigSecret, secretReader } from './fakes.js';

const REG = 'reg.example:5000';

function copy(
  name: string,
  references: string[] | undefined,
  secret = dockerConfigSecret(name, { [REG]: { username: name, password: 'p' } }),
): PullSecretObject {
  return {
    ...secret,
    metadata: {
      ...secret.metadata,
      ...(references && { annotations: { 'imagepulljobs.kruise.io/references': references.join(',') } }),
    },
  };
}

const malformed = (name: string, references: string[]): PullSecretObject =>
  copy(name, references, dockerConfigSecret(name, { [REG]: { auth: '!!!notbase64' } }));

const owner = (namespace: string, name: string) => ({
  kind: 'ImagePullJob',
  namespace,
  name,
  uid: `${namespace}-${name}`,
});

describe('pull secrets per tag owner', () => {
  it('tagOwnerKeys: none for a hand-written tag, ns/name for owners, nothing for an owner without namespace', () => {
    assert.equal(tagOwnerKeys(undefined), undefined);
    assert.equal(tagOwnerKeys([]), undefined);
    assert.deepEqual(tagOwnerKeys([owner('s', 'job'), { kind: 'ImagePullJob', name: 'x' }]), ['s/job']);
    assert.deepEqual(secretReferences({ 'imagepulljobs.kruise.io/references': 'a/x,b/y' }), ['a/x', 'b/y']);
    assert.equal(secretReferences({}), undefined);
  });

  it('tagMayUseSecret: listed owners only; a secret without references only for jobs of kruise-daemon-config', () => {
    assert.equal(tagMayUseSecret(['u/job'], ['s/job']), false);
    assert.equal(tagMayUseSecret(['u/job'], ['s/job', 'u/job']), true);
    assert.equal(tagMayUseSecret(['u/job'], []), false);
    assert.equal(tagMayUseSecret(['u/job'], undefined), false);
    assert.equal(tagMayUseSecret(['kruise-daemon-config/job'], undefined), true);
    assert.equal(tagMayUseSecret(undefined, ['s/job']), true, 'a tag written by hand uses what its image names');
    assert.equal(tagMayUseSecret([], ['s/job']), false, 'owners that name no job match nothing');
  });

  it("a tenant's tag never gets another tenant's credentials from the same image", async () => {
    const { read } = secretReader({ 's-copy': copy('s-copy', ['s/job']), 'u-copy': copy('u-copy', ['u/job']) });
    const store = new PullSecretStore(read, new FakeClock());
    const pullSecrets = [{ name: 's-copy' }, { name: 'u-copy' }];
    const forU = await store.credentials({
      imageName: REG + '/app',
      tag: '2',
      pullSecrets,
      ownerReferences: [owner('u', 'job')],
    });
    assert.deepEqual(
      forU.credentials.map((c) => c.username),
      ['u-copy'],
    );
    const forNone = await store.credentials({
      imageName: REG + '/app',
      tag: '3',
      pullSecrets: [{ name: 's-copy' }],
      ownerReferences: [owner('u', 'other')],
    });
    assert.deepEqual(forNone.credentials, [], "U's job without a secret gets nothing of S's");
    const byHand = await store.credentials({ imageName: REG + '/app', tag: '4', pullSecrets });
    assert.equal(byHand.credentials.length, 2, 'a tag without owners (written by an admin) uses every secret named');
  });

  it("S's malformed secret fails S's tag (named), not U's; a tag S and U share skips it unnamed", async () => {
    const { read } = secretReader({ 's-bad': malformed('s-bad', ['s/job']), 'u-copy': copy('u-copy', ['u/job']) });
    const store = new PullSecretStore(read, new FakeClock());
    const pullSecrets = [{ name: 's-bad' }, { name: 'u-copy' }];
    await assert.rejects(
      store.credentials({ imageName: 'img', tag: '1', pullSecrets, ownerReferences: [owner('s', 'job')] }),
      (err: unknown) => err instanceof PullSecretProblem && /kruise-daemon-config\/s-bad/.test(err.message),
    );
    const forU = await store.credentials({
      imageName: 'img',
      tag: '2',
      pullSecrets,
      ownerReferences: [owner('u', 'job')],
    });
    assert.deepEqual(
      forU.credentials.map((c) => c.username),
      ['u-copy'],
    );
    assert.equal(skippedSecretsMessage(forU), '');
    const shared = await store.credentials({
      imageName: 'img',
      tag: '3',
      pullSecrets,
      ownerReferences: [owner('s', 'job'), owner('u', 'job')],
    });
    assert.deepEqual(
      shared.credentials.map((c) => c.username),
      ['u-copy'],
    );
    const message = skippedSecretsMessage(shared);
    assert.match(message, /1 malformed pull secret\(s\) of another owner of this tag skipped/);
    assert.doesNotMatch(message, /s-bad/);
  });

  it('a missing copy is named for a hand-written tag, only counted for an owned one', async () => {
    const { read } = secretReader({});
    const store = new PullSecretStore(read, new FakeClock());
    const owned = await store.credentials({
      imageName: 'img',
      tag: '1',
      pullSecrets: [{ name: 'gone-1234' }],
      ownerReferences: [owner('u', 'job')],
    });
    assert.deepEqual(owned.missing, []);
    assert.equal(owned.unnamedMissing, 1);
    assert.doesNotMatch(skippedSecretsMessage(owned), /gone/);
    const byHand = await store.credentials({ imageName: 'img', tag: '1', pullSecrets: [{ name: 'gone-1234' }] });
    assert.deepEqual(byHand.missing, ['gone-1234']);
    assert.match(skippedSecretsMessage(byHand), /pull secret kruise-daemon-config\/gone-1234 not found, skipped/);
  });
});
