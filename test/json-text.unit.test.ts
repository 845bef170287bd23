// JSON read as text (src/json-text.ts): a member's value cut out as written, whitespace outside strings
// taken out, a member name repeated in one object found with its pointer. No database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compact, memberText, nestsDeeperThan, repeatedName } from '../src/lib/json-text.ts';

describe('json text', () => {
  test('memberText: the top-level member’s value as written, compact; nested and string lookalikes skipped', () => {
    const body =
      '{ "type" : "a.b", "nested": {"data": 1}, "s": "\\"data\\": 2", "data" : { "x" : [1, 2.50, 1e400] } }';
    assert.equal(memberText(body, 'data'), '{"x":[1,2.50,1e400]}');
    assert.equal(memberText(body, 'type'), '"a.b"');
    assert.equal(memberText('{"data":12345678901234567890}', 'data'), '12345678901234567890');
    assert.equal(memberText('{"d\\u0061ta":true}', 'data'), 'true', 'an escaped name is the same name');
    assert.equal(memberText('{"other":1}', 'data'), undefined);
  });

  test('compact: whitespace goes outside strings only; compact text is returned as it is', () => {
    assert.equal(compact('{ "a b" : [ 1 ,\n2 ] }'), '{"a b":[1,2]}');
    const text = '{"a":"x  \\" y"}';
    assert.equal(compact(text), text);
  });

  test('repeatedName: the pointer of a name its object already has, escapes decoded; null when none', () => {
    assert.equal(repeatedName('{"a":1,"b":{"c":[0,{"d":1,"d":2}]}}'), '/b/c/1/d');
    assert.equal(repeatedName('{"a":1,"\\u0061":2}'), '/a');
    assert.equal(repeatedName('{"a/b":{"x":1,"x":2}}'), '/a~1b/x');
    assert.equal(repeatedName('{"a":{"x":1},"b":{"x":1},"s":"a,a"}'), null);
  });

  test('strings end at the first quote after an even run of backslashes', () => {
    for (const s of ['a"b', 'a\\', '\\"', '\\\\"', '"', '\\', '\\\\\\"x', '{"[', 'x'.repeat(500)]) {
      const data = JSON.stringify({ k: s, n: [s] });
      const body = JSON.stringify({ pre: s, data: JSON.parse(data), post: s });
      assert.equal(memberText(body, 'data'), data, s);
      assert.equal(repeatedName(body), null, s);
      assert.equal(repeatedName(JSON.stringify({ k: s }).replace('}', `,"k":1}`)), '/k', s);
      assert.equal(nestsDeeperThan(body, 3), false, s);
      assert.equal(nestsDeeperThan(body, 2), true, s);
    }
  });

  test('nestsDeeperThan: brackets inside strings do not count', () => {
    assert.equal(nestsDeeperThan('[[["[[[[["]]]', 3), false);
    assert.equal(nestsDeeperThan('[[[[]]]]', 3), true);
  });
});
