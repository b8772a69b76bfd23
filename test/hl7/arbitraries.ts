// fast-check arbitraries shared by the HL7 property tests.
import fc from 'fast-check';
import type { Delimiters } from '../../drivers/hl7/delimiters.js';

/** Any five distinct delimiter characters a sender may declare in MSH-1 and MSH-2. */
export const delimiterSets = fc
  .shuffledSubarray([...'|^~\\&#!@$%*+'], { minLength: 5, maxLength: 5 })
  .map(([field, component, repetition, escape, subcomponent]): Delimiters => ({
    field: field!,
    component: component!,
    repetition: repetition!,
    escape: escape!,
    subcomponent: subcomponent!,
  }));
