// Checks for the OpenAPI `format` values kube-apiserver knows. Unknown formats are not checked (as
// kube). Numeric formats int32/int64 are range-checked here although kube does not: a Go client
// decoding an out-of-range int32 would fail, so the emulator refuses it up front.

import { isIP, isIPv4, isIPv6 } from 'node:net';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID_VERSIONED = (version: number): RegExp =>
  new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${version}[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`, 'i');
const HOSTNAME =
  /^(?=.{1,255}$)[a-zA-Z0-9](?:[-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$/;
const MAC = /^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const DURATION = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)\s*(?:ns|us|µs|μs|ms|s|m|h|d|w))+$|^0$/;
const HEX_COLOR = /^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR = /^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;

const STRING_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': isDateTime,
  datetime: isDateTime,
  date: isDate,
  byte: (v) => BASE64.test(v),
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID_VERSIONED(3).test(v),
  uuid4: (v) => UUID_VERSIONED(4).test(v),
  uuid5: (v) => UUID_VERSIONED(5).test(v),
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v),
  cidr: isCidr,
  mac: (v) => MAC.test(v),
  hostname: (v) => HOSTNAME.test(v),
  email: (v) => EMAIL.test(v),
  uri: (v) => URL.canParse(v),
  duration: (v) => DURATION.test(v),
  hexcolor: (v) => HEX_COLOR.test(v),
  rgbcolor: (v) => RGB_COLOR.test(v),
  bsonobjectid: (v) => BSON_OBJECT_ID.test(v),
  password: () => true,
};

const INTEGER_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-2147483648, 2147483647],
  // Beyond 2^53 a JS number is inexact (2^63 rounds to the bound); the bounds still catch absurd values.
  int64: [-(2 ** 63), 2 ** 63],
};

/** false if `value` violates `format`; true if it conforms or the format does not apply to it. */
export function conformsToFormat(format: string, value: unknown): boolean {
  if (typeof value === 'string') {
    const check = STRING_FORMATS[format];
    return check ? check(value) : true;
  }
  if (typeof value === 'number') {
    const range = INTEGER_RANGES[format];
    return range ? Number.isInteger(value) && value >= range[0] && value <= range[1] : true;
  }
  return true;
}

function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [, year, month, day, hour, minute, second] = m.map(Number);
  return validDate(year ?? 0, month ?? 0, day ?? 0) && (hour ?? 99) < 24 && (minute ?? 99) < 60 && (second ?? 99) < 61;
}

function isDate(value: string): boolean {
  const m = DATE.exec(value);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const ip = value.slice(0, slash);
  const prefix = value.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
